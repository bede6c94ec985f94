"""Starting Quire's desktop app."""

# First, before Qt or anything that may load ONNX Runtime (see ui/__init__.py and engine/__init__.py).
import engine  # noqa: F401
