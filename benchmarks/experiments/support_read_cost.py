"""What the writer's support read costs here, and whether Quire would read every written sentence.

    python benchmarks/experiments/support_read_cost.py --model WRITER.gguf [--gpu-layers N] [--out FILE]

Loads the model as Quire does (``LlamaModel``), then reads five sentences of a SPECTER answer against
the passage of the bundled paper that states its training data (engine/synthesis/support_reader.py),
timing each read. The first read evaluates the system message and the worked examples; later reads
find them in llama.cpp's prefix cache, which is what a read costs inside an answer. Records the
machine's load, whether llama.cpp offloads to a GPU, the fastest read, the rule's decision
(``reads_every_sentence``) and what reading every sentence of a 10-sentence answer would add.
Results: benchmarks/results/support_read_cost.json (one entry per machine label).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine.demo import demo_papers  # noqa: E402
from engine.generate.llama import LlamaModel  # noqa: E402
from engine.ingest.pipeline import parse_pdf  # noqa: E402
from engine.process import prepare_process  # noqa: E402
from engine.synthesis.support_reader import CHEAP_READ_SECONDS, reads_every_sentence, support_score  # noqa: E402

SENTENCES = (
    "SPECTER chooses positive and negative papers by constructing up to 5 training triples, each comprised of a "
    "query paper PQ, a positive paper P+, and a negative paper P−.",
    "SPECTER is trained on about 146K query papers from the Semantic Scholar corpus.",
    "The positive papers are sampled from the direct citations of the query paper.",
    "SPECTER is trained on 10 million PubMed abstracts.",
    "SPECTER does not construct any training triples for a query paper.",
)


def main() -> None:
    prepare_process()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, type=Path)
    parser.add_argument("--gpu-layers", type=int, default=0)
    parser.add_argument("--label", default=platform.node() or "this machine")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/support_read_cost.json")
    args = parser.parse_args()
    specter = next(p for p in demo_papers() if p.name == "2020.acl-main.207.pdf")
    passage = next(p.text for p in parse_pdf(specter).passages
                   if "construct up to 5 training triples" in " ".join(p.text.split()))
    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    lm = LlamaModel(args.model, context_size=4096, gpu_layers=args.gpu_layers)
    loaded = time.perf_counter() - started
    reads = []
    for sentence in SENTENCES:
        began = time.perf_counter()
        score = support_score(lm, sentence, passage)
        reads.append({"sentence": sentence, "score": round(score, 3), "seconds": round(time.perf_counter() - began, 3)})
    fastest = min(r["seconds"] for r in reads[1:])
    report = {"cpus": os.cpu_count(), "load_average_at_start": round(load_start, 2),
              "load_average_at_end": round(os.getloadavg()[0], 2), "model": args.model.name,
              "gpu_layers": args.gpu_layers, "offloaded": lm.offloaded, "load_seconds": round(loaded, 2),
              "reads": reads, "fastest_read_seconds": fastest,
              "cheap_read_seconds": CHEAP_READ_SECONDS,
              "reads_every_sentence": reads_every_sentence(lm.offloaded, fastest),
              "ten_sentence_answer_extra_seconds": round(10 * fastest, 1)}
    print(json.dumps(report, indent=1))
    results = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    results[args.label] = report
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
