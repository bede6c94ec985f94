"""On the GPU machine: the packed base back to an fp32 model folder."""
import shutil
import sys
from pathlib import Path

from safetensors.torch import load_file, save_file

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir(parents=True, exist_ok=True)
for f in src.iterdir():
    if f.suffix in (".json", ".txt"):
        shutil.copy(f, dst / f.name)
packed = load_file(str(src / "packed.safetensors"))
state = {}
for k, v in packed.items():
    if k.endswith(".q8"):
        name = k[:-3]
        state[name] = v.float() * packed[name + ".scale"]
    elif not k.endswith(".scale"):
        state[k] = v.float()
save_file(state, str(dst / "model.safetensors"))
print("base unpacked:", len(state), "tensors")
