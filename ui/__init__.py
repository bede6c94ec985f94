"""Quire's Qt user interface; it talks to the engine through ui.engine_client only."""

# Imported first, before any module here can import PyMuPDF (the PDF viewer does): importing the
# engine switches ONNX Runtime's telemetry off, which must happen before the runtime is loaded,
# and PyMuPDF 2 loads it. Whatever imports a ui module first, the opt-out is in place.
import engine  # noqa: F401
