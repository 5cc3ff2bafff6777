import sys

from ibe_postprocess.cli import main

sys.exit(main())
