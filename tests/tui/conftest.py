import os
import sys
from pathlib import Path

# Before textual is imported anywhere: no animations, so tests are deterministic.
os.environ["TEXTUAL_ANIMATIONS"] = "none"

sys.path.insert(0, str(Path(__file__).parent))
