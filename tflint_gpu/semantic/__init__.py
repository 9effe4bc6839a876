"""The semantic model: what one file's code means, as facts rules ask for.

Scopes, bindings and names (``model``, ``names``, ``bindings``), value kinds
(``values``, ``tensors``, ``objects``), graph contexts (``context``, ``uses``),
tf.data chains (``datasets``), repetition and run-once code, retracing, eager
training, state frozen at trace, Keras migration and mixed precision, and
``facts.RuleContext``, the one object a rule asks. Nothing here imports the
driver (``engine``) or a rule.
"""
