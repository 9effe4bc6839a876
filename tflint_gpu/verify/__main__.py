"""``python -m tflint_gpu.verify``: the same as ``tflint-gpu verify``."""
import sys

from tflint_gpu.verify.command import main

sys.exit(main())
