"""Back home: eval_runs.py's fp16 chunks into one fp32 state dict (for train_judge.py export --weights)."""
import sys

import torch
from safetensors.torch import load_file, save_file

out = sys.argv[1]
state = {}
for f in sys.argv[2:]:
    state.update(load_file(f))
parts = sorted(k for k in state if "@" in k)
for name in sorted({k.split("@")[0] for k in parts}):
    state[name] = torch.cat([state.pop(f"{name}@{j}") for j in range(3)])
save_file({k: v.float().contiguous() for k, v in state.items()}, out)
print(len(state), "tensors ->", out)
