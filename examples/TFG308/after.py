"""TFG308: fit on a dataset in class order that nothing shuffles.

Images of three classes are written to one directory per class and read with
`image_dataset_from_directory(..., shuffle=False)`: the batches come class by
class, every epoch (Keras's `fit(shuffle=True)` does not shuffle a
`Dataset`). Each epoch ends on batches of the last class, and the model
leans toward it. After: `shuffle=True` (with a seed), the batches mix the
classes. The example returns the accuracy on all the images after training.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (96, 8), "large": (384, 16)}  # (images per class, epochs)
CLASSES = 3


def write_images(root, per_class):
    rng = np.random.default_rng(0)
    centres = rng.uniform(40, 215, (CLASSES, 3))
    for label in range(CLASSES):
        folder = os.path.join(root, f"class_{label}")
        os.makedirs(folder)
        for i in range(per_class):
            # a noisy colour per class, the colours close enough that the classes overlap a little
            image = np.clip(centres[label] + rng.normal(0, 70, (8, 8, 3)), 0, 255).astype("uint8")
            tf.io.write_file(os.path.join(folder, f"{i}.png"), tf.io.encode_png(image))


def main(size):
    per_class, epochs = SIZES[size]
    with tempfile.TemporaryDirectory() as root:
        write_images(root, per_class)
        train = tf.keras.utils.image_dataset_from_directory(root, image_size=(8, 8), batch_size=16, shuffle=True, seed=0)
        train = train.cache()
        tf.keras.utils.set_random_seed(0)
        model = tf.keras.Sequential([tf.keras.Input((8, 8, 3)), tf.keras.layers.Rescaling(1 / 255),
                                     tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(CLASSES)])
        model.compile(tf.keras.optimizers.SGD(0.5),
                      tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        model.fit(train, epochs=epochs, verbose=0)
        every = tf.keras.utils.image_dataset_from_directory(root, image_size=(8, 8), batch_size=64, shuffle=False)
        return np.array(model.evaluate(every, verbose=0)[1])


def behaviour_changed(before, after):
    """Trained class by class, the model leans toward the last class; shuffled, it separates them."""
    return float(after) > float(before) + 0.05
