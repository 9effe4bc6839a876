import sys

from tflint_gpu.cli import main

sys.exit(main())
