"""The scenario's helper modules sit beside the test; put their folder on the import path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
