"""The audio front ends: int16 PCM -> the features a keyword model reads, one C implementation
(``firmware/frontend/``) per preset, run on the device and, compiled for the host, in training
and scoring. ``presets`` is the closed set of presets and the API they share; ``config``,
``native`` the project's own float MFCC / log-mel (preset ``tinydeploy``); ``mlperf``
MLPerf Tiny's MFCCs; ``micro_config``, ``micro`` TensorFlow's microfrontend (micro-speech);
``header`` the config header every preset renders; ``hostlib`` the host build. A stage below
the kws application and the build's kws headers; TensorFlow is imported only inside the
reference functions that use it."""
