"""The trained judge's and reader's export: a PyTorch pair classifier to an int8 ONNX graph and its tokenizer.

Used by train_judge.py export and train_reader.py export; the product reads the result with
engine/cite/judge.py's PairModel (ONNX Runtime and the tokenizers library, no torch). And the way back:
:func:`dynamic_graph_state` reads a dynamic-int8 graph's weights as a PyTorch state dict.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any


def write_int8_onnx(model: Any, tokenizer: Any, out: Path, weight_only: bool = False,
                    reduce_range: bool = False) -> None:
    """``out``/model.int8.onnx (the graph's output: logits) and tokenizer.json.

    Default (the judge): ONNX Runtime's dynamic quantization, int8 weights per channel and int8
    activations per tensor, the fastest on a CPU. ``weight_only`` (the reader): int8 weights, float
    activations (:func:`weight_only_int8`). The reader's scores must order near-identical sentences of
    one paper, and quantized activations moved its logits by up to 5.8 (correlation 0.86 with the float
    model; on the held-out questions, answering sentence first 0.53 float, 0.44 quantized), where
    weight-only int8 stays within 0.3 (correlation 0.9998) at about 1.5x the time. ``reduce_range``: the
    dynamic graph's weights in 7 bits, so that no CPU's kernel can overflow a sum of two products in 16 bits
    (without AVX-512 VNNI, x86 sums them so; with it, exactly), and every CPU computes the same."""
    import torch
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.encoder.set_attn_implementation("eager")
    plain = out / "model.fp32.onnx"
    sample = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (sample, sample, torch.zeros_like(sample)), str(plain), dynamo=False,
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                          opset_version=17, dynamic_axes={"input_ids": axes, "attention_mask": axes,
                                                          "token_type_ids": axes, "logits": {0: "batch"}})
    if weight_only:
        weight_only_int8(plain, out / "model.int8.onnx")
    else:
        quantize_dynamic(str(plain), str(out / "model.int8.onnx"), per_channel=True, reduce_range=reduce_range,
                         weight_type=QuantType.QInt8,
                         extra_options={"WeightSymmetric": True, "ActivationSymmetric": False,
                                        "DefaultTensorType": TensorProto.FLOAT})
    plain.unlink()
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))


def weight_only_int8(plain: Path, target: Path) -> None:
    """Every matrix product's weights as int8 in blocks of 32 (ONNX Runtime's MatMulNBits, computing in
    float), and the word embeddings as int8 with one scale per row (a Gather of codes and of scales, then
    a multiply): 25 MB against 90 MB float. The blocks and rows keep an outlier from coarsening the rest."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quantizer = MatMulNBitsQuantizer(onnx.load(str(plain)), bits=8, block_size=32, is_symmetric=True,
                                     accuracy_level=0)
    quantizer.process()
    graph = quantizer.model.model.graph
    name = "encoder.embeddings.word_embeddings.weight"
    table = next(init for init in graph.initializer if init.name == name)
    weights = numpy_helper.to_array(table)
    scale = np.maximum(np.abs(weights).max(axis=1), 1e-8) / 127.0
    table.CopyFrom(numpy_helper.from_array(np.round(weights / scale[:, None]).astype(np.int8), f"{name}_int8"))
    graph.initializer.append(numpy_helper.from_array(scale.astype(np.float32)[:, None], f"{name}_scale"))
    index, gather = next((i, n) for i, n in enumerate(graph.node) if n.op_type == "Gather" and n.input[0] == name)
    ids, embedded = gather.input[1], gather.output[0]
    gather.input[0], gather.output[0] = f"{name}_int8", f"{embedded}_int8"
    for offset, node in enumerate([
            helper.make_node("Cast", [f"{embedded}_int8"], [f"{embedded}_codes"], to=TensorProto.FLOAT),
            helper.make_node("Gather", [f"{name}_scale", ids], [f"{embedded}_row_scale"]),
            helper.make_node("Mul", [f"{embedded}_codes", f"{embedded}_row_scale"], [embedded])]):
        graph.node.insert(index + 1 + offset, node)
    onnx.save(quantizer.model.model, str(target))


def dynamic_graph_state(graph_file: Path) -> dict[str, Any]:
    """The weights of a dynamic-int8 graph written by :func:`write_int8_onnx`, dequantized, by module name.

    The graph names each integer matrix product after its module ("/encoder/encoder/layer.0/attention/self/
    query/MatMulInteger" is "/encoder/encoder/layer.0/attention/self/query/MatMul_quant", the head's
    "/head/Gemm_MatMul_quant"), so its weight (codes minus zero point, times the per-channel scale) is that
    module's; biases and layer norms kept their names and float values; embeddings are uint8 with one scale."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper

    graph = onnx.load(str(graph_file)).graph
    values = {init.name: numpy_helper.to_array(init) for init in graph.initializer}

    def dequantized(prefix: str) -> Any:
        codes = values[f"{prefix}_quantized"].astype(np.float32)
        return (codes - values[f"{prefix}_zero_point"].astype(np.float32)) * values[f"{prefix}_scale"]

    state: dict[str, Any] = {}
    for node in graph.node:
        if node.op_type == "MatMulInteger":
            module = node.name.rsplit("/", 1)[0].strip("/").replace("/", ".")
            state[f"{module}.weight"] = torch.tensor(dequantized(node.input[1][:-len("_quantized")]).T.copy())
    for name, array in values.items():
        if "_Transposed" in name or name.startswith("onnx::") or "." not in name:
            continue  # a matrix product's weight (read above from its node), or the graph's own constants
        if name.endswith("_quantized"):
            state[name[:-len("_quantized")]] = torch.tensor(dequantized(name[:-len("_quantized")]).copy())
        elif array.dtype == np.float32 and array.ndim >= 1 and not name.endswith(("_scale", "_zero_point")):
            state[name] = torch.tensor(array.copy())
    return state


def weight_only_graph_state(graph_file: Path) -> dict[str, Any]:
    """The weights of a weight-only int8 graph written by :func:`weight_only_int8` (the reader), dequantized,
    by module name: each MatMulNBits node ("/encoder/encoder/layer.0/attention/self/query/MatMul_Q8") holds its
    module's weight as uint8 codes in blocks of 32 along the input (symmetric: zero point 128) with one scale a
    block; the word embeddings are int8 codes with one scale a row; the rest kept its name and float value."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper

    graph = onnx.load(str(graph_file)).graph
    values = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    state: dict[str, Any] = {}
    for node in graph.node:
        if node.op_type == "MatMulNBits":
            size = {a.name: a.i for a in node.attribute}
            codes = values[node.input[1]].astype(np.float32) - 128.0  # (out, blocks, block)
            weight = (codes * values[node.input[2]][:, :, None]).reshape(size["N"], -1)[:, :size["K"]]
            module = node.name.rsplit("/", 1)[0].strip("/").replace("/", ".")
            state[f"{module}.weight"] = torch.tensor(weight.copy())  # torch's Linear keeps (out, in)
    embedding = "encoder.embeddings.word_embeddings.weight"
    if f"{embedding}_int8" in values:
        state[embedding] = torch.tensor(values[f"{embedding}_int8"].astype(np.float32) * values[f"{embedding}_scale"])
    for name, array in values.items():
        if name.startswith("onnx::") or "." not in name or name.startswith(embedding):
            continue
        if array.dtype == np.float32 and array.ndim >= 1:
            state[name] = torch.tensor(array.copy())
    return state


def load_matching(model: Any, state: dict[str, Any]) -> int:
    """Load the tensors of ``state`` that ``model`` has under the same name and shape; how many were loaded
    (a graph read back lacks what its model never used, the pooler, and holds what ``model`` may not)."""
    own = model.state_dict()
    taken = {k: v for k, v in state.items() if k in own and tuple(own[k].shape) == tuple(v.shape)}
    model.load_state_dict(taken, strict=False)
    return len(taken)
