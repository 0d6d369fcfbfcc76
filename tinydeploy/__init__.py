"""tinydeploy: an ahead-of-time compiler from TFLite INT8 models to Cortex-M firmware."""

__version__ = "0.1.0"
