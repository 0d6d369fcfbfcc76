"""Keyword spotting: the audio front end (``frontend_config``, ``frontend``: the C code of
``firmware/frontend/`` on the host), data (``wav``, ``data``), training (``train``), and
streaming to the ``kws`` device app (``device``, ``stream``). TensorFlow is imported only
inside ``train``'s functions."""
