"""Before the run: pack all-MiniLM-L6-v2 small enough to travel (every matrix int8 per row, the rest fp16)."""
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir(parents=True, exist_ok=True)
for f in src.iterdir():
    if f.is_file() and f.suffix in (".json", ".txt") and f.name != "data_config.json":
        shutil.copy(f, dst / f.name)
state = load_file(str(src / "model.safetensors"))
packed = {}
for k, v in state.items():
    if v.dim() == 2:
        scale = v.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127
        packed[k + ".q8"] = torch.round(v / scale).to(torch.int8)
        packed[k + ".scale"] = scale.float()
    else:
        packed[k] = v.half()
save_file(packed, str(dst / "packed.safetensors"))
print(len(state), "tensors")
