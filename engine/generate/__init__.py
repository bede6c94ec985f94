"""Language models: the LanguageModel protocol (base), its llama.cpp implementation (llama),
GGUF validation (gguf) and what the llama.cpp build supports (backend).

OpenMP's wait policy, which llama.cpp's speed on a shared CPU depends on, is set by the programs
that start Quire (engine.process), not here."""
