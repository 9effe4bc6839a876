"""TFG607: the same Keras model built again at every loop iteration.

A helper checks that a layer name exists by building a whole
`keras.applications` model and scanning its layers; the loop calls it for
each name, so the model is built once per name. After: the layer names are
read from one model built before the loop. The example returns which names
exist (the same answers).
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": 4, "large": 16}  # names looked up
NAMES = ["conv1", "block_1_expand", "block_3_depthwise", "missing", "Conv_1", "block_16_project",
         "block_5_add", "nope"]


def layer_exists(name):
    return any(layer.name == name for layer in tf.keras.applications.MobileNetV2(weights=None).layers)


def main(size):
    names = (NAMES * 2)[:SIZES[size]]
    found = []
    for name in names:
        found.append(layer_exists(name))
    return np.array(found)
