"""Makes python/ importable when cuact_torch is not installed."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if importlib.util.find_spec("cuact_torch") is None:
    sys.path.insert(0, os.path.dirname(HERE))
