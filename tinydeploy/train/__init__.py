"""Training keyword models (TensorFlow, imported inside the functions): data sets (``data``),
augmentation (``augment``) and the DS-CNN recipes (``kws``). Above the kws application, whose
labels, WAV reading and front ends it uses; nothing below imports it."""
