"""tflint-gpu: a static linter with autofix for TensorFlow 2 code that keeps GPUs idle."""

__version__ = "0.1.0"
