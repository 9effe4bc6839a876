"""`tflint-gpu verify`: run every rule's before/after example under TensorFlow.

The parent process never imports TensorFlow: each example file runs in a
fresh child (``tflint_gpu.verify.runner``) that reports the device, the
TensorFlow version, timings, trace counts and the result as NumPy data. The
parent checks that ``after.py`` is exactly the fixer's output (for a rule
without a fix: that it no longer has the finding ``before.py`` has), compares the
results (``compare``) and prints a verdict a row (``command``).
"""
