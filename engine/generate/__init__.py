"""Language models: the LanguageModel protocol (base), its llama.cpp implementation (llama),
GGUF validation (gguf) and what the llama.cpp build supports (backend)."""

import os

# llama.cpp's CPU backend runs on OpenMP, whose worker threads spin while they wait. On a desktop
# where other work shares the cores, spinning threads starve each other: measured here with 2
# threads on a busy 2-core machine, 0.6-2 tokens/s spinning against ~20 tokens/s passive. libgomp
# reads this when llama.cpp's library loads, so it is set before anything imports llama_cpp;
# a value the user exported wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
