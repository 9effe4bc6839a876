"""The driver: how files become findings (``lint`` one text, ``fix`` in rounds, ``run`` many files with a cache).

It builds the semantic model (``tflint_gpu.semantic``) of each file and runs the rules over it.
"""
