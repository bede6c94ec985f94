# ruff: noqa: E501  (a table of hand-written sentences: one pair per line reads better than wrapped strings)
"""Build tests/data/support_pairs.jsonl: hand-written (sentence, passage, label) pairs over the real corpus.

The sentences and labels below were written by hand while reading each passage (label 1: the
passage supports the sentence; 0: it does not — hard negatives are on-topic claims the passage
does not make, or gets wrong). The passage texts are taken from an ingest of
../shared/corpus/papers so the file stays self-contained for tests.

    .venv/bin/python tests/data/make_support_pairs.py HOME   # HOME: a library with the corpus ingested
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.service import Engine

# (paper file, passage ordinal, sentence, label)
PAIRS: list[tuple[str, int, str, int]] = [
    # SPECTER, introduction
    ("2020.acl-main.207.pdf", 1, "SPECTER learns general-purpose vector representations of scientific documents.", 1),
    ("2020.acl-main.207.pdf", 1, "SPECTER uses citations as a supervision signal and a triplet-loss pretraining objective.", 1),
    ("2020.acl-main.207.pdf", 1, "At inference time SPECTER does not need any citation information.", 1),
    ("2020.acl-main.207.pdf", 1, "Passing title and abstract to an off-the-shelf language model such as SciBERT does not give accurate paper representations.", 1),
    ("2020.acl-main.207.pdf", 1, "SPECTER requires task-specific fine-tuning for every downstream task.", 0),
    ("2020.acl-main.207.pdf", 1, "SPECTER was trained on 81 million papers from the Semantic Scholar corpus.", 0),
    ("2020.acl-main.207.pdf", 1, "The model is evaluated with MAP and nDCG on citation prediction.", 0),
    ("2020.acl-main.207.pdf", 3, "SPECTER builds on SciBERT, a version of BERT adapted to scientific text.", 1),
    ("2020.acl-main.207.pdf", 3, "The paper embeddings can be used as features without further fine-tuning.", 1),
    ("2020.acl-main.207.pdf", 3, "The pooled output of the [CLS] token is used as the representation of the sequence.", 1),
    ("2020.acl-main.207.pdf", 3, "SPECTER is trained with a masked language modeling loss on citation contexts.", 0),
    ("2020.acl-main.207.pdf", 8, "Citation prediction is evaluated as a ranking task with MAP and nDCG.", 1),
    ("2020.acl-main.207.pdf", 8, "The topic classification dataset has 25K papers over 19 level-1 MAG classes.", 1),
    ("2020.acl-main.207.pdf", 8, "The largest MeSH category is Neoplasms with 5.4K instances.", 1),
    ("2020.acl-main.207.pdf", 8, "The topic classification dataset uses the most specific level 5 MAG topics.", 0),
    ("2020.acl-main.207.pdf", 8, "SPECTER outperforms SciBERT by 10 points on co-citation prediction.", 0),
    # S2ORC
    ("2020.acl-main.447.pdf", 4, "S2ORC processes PDFs with ScienceParse and GROBID.", 1),
    ("2020.acl-main.447.pdf", 4, "Of about 31.3M PDFs, 30.5M were selected for processing.", 1),
    ("2020.acl-main.447.pdf", 4, "The S2ORC pipeline filters paper clusters with insufficient metadata and resolves bibliography links.", 1),
    ("2020.acl-main.447.pdf", 4, "S2ORC includes dissertations, reports and slides to maximise coverage.", 0),
    ("2020.acl-main.447.pdf", 4, "S2ORC covers papers in 40 languages.", 0),
    ("2020.acl-main.447.pdf", 9, "The S2ORC corpus consists of 81.1M papers.", 1),
    ("2020.acl-main.447.pdf", 9, "Publisher-provided abstracts cover 90.4% of S2ORC papers.", 1),
    ("2020.acl-main.447.pdf", 9, "About 8.1M S2ORC papers have GROBID full text and 1.5M have LaTeX full text.", 1),
    ("2020.acl-main.447.pdf", 9, "All S2ORC papers have a PDF with full text.", 0),
    ("2020.acl-main.447.pdf", 9, "S2ORC contains 136M paper nodes in its citation graph.", 0),
    ("2020.acl-main.447.pdf", 1, "Inline citations in S2ORC are linked to bibliography entries and to other papers.", 1),
    ("2020.acl-main.447.pdf", 1, "The ACL Anthology Network and RefSeer combine citation graphs with raw text.", 1),
    ("2020.acl-main.447.pdf", 1, "S2ORC is restricted to the biomedical literature in PubMed Central.", 0),
    # LongEval
    ("2023.eacl-main.121.pdf", 1, "The authors surveyed 162 papers on long-form summarization.", 1),
    ("2023.eacl-main.121.pdf", 1, "Most long-form summarization papers (73%) do not run human evaluation on long summaries.", 1),
    ("2023.eacl-main.121.pdf", 1, "Human evaluation is labor-intensive, expensive to scale and difficult to design.", 1),
    ("2023.eacl-main.121.pdf", 1, "Inter-annotator agreement is consistently high in long-form summary evaluation.", 0),
    ("2023.eacl-main.121.pdf", 1, "LongEval uses GPT-4 to replace human judges.", 0),
    ("2023.eacl-main.121.pdf", 5, "101 of the 162 surveyed papers perform no human evaluation at all.", 1),
    ("2023.eacl-main.121.pdf", 5, "The survey considered datasets whose summaries average at least 150 words, such as arXiv and BillSum.", 1),
    ("2023.eacl-main.121.pdf", 5, "The surveyed papers were published between 2010 and 2015.", 0),
    # Semantic Scholar literature graph
    ("N18-3011.pdf", 1, "The literature graph is a directed property graph summarizing key information in the literature.", 1),
    ("N18-3011.pdf", 1, "Literature graph construction is reduced to sequence labeling, entity linking and relation extraction.", 1),
    ("N18-3011.pdf", 1, "The graph can be queried to compute an author's Erdős number.", 1),
    ("N18-3011.pdf", 1, "The literature graph is built entirely by manual curation.", 0),
    ("N18-3011.pdf", 1, "The system reaches 91% F1 on CoNLL-2003 named entity recognition.", 0),
    # PaperMage
    ("papermage.pdf", 3, "Layout-infused Transformers have been used to recover the logical structure of scientific papers.", 1),
    ("papermage.pdf", 3, "papermage depends on LayoutParser for access to vision models.", 1),
    ("papermage.pdf", 3, "Research models often need significant glue code to build robust processing pipelines.", 1),
    ("papermage.pdf", 3, "papermage replaces GROBID with a rule-based PDF parser written in Java.", 0),
    ("papermage.pdf", 1, "Scientific document processing usually starts with a parser that outputs tokens and bounding boxes in reading order.", 1),
    ("papermage.pdf", 1, "Existing PDF parsers already provide sentence splits and figure detection in one model.", 0),
    # MapReduce
    ("map-reduce.pdf", 1, "MapReduce hides parallelization, fault tolerance, data distribution and load balancing in a library.", 1),
    ("map-reduce.pdf", 1, "The abstraction is inspired by the map and reduce primitives of Lisp.", 1),
    ("map-reduce.pdf", 1, "Re-execution is the primary mechanism for fault tolerance in MapReduce.", 1),
    ("map-reduce.pdf", 1, "MapReduce relies on checkpointing to a distributed database for fault tolerance.", 0),
    ("map-reduce.pdf", 5, "Google's clusters are built from commodity PCs connected by switched Ethernet.", 1),
    ("map-reduce.pdf", 5, "Machines typically have 2-4 GB of memory and dual x86 processors running Linux.", 1),
    ("map-reduce.pdf", 5, "Because clusters have thousands of machines, machine failures are common.", 1),
    ("map-reduce.pdf", 5, "Each machine stores its data on expensive SAN storage arrays.", 0),
    ("map-reduce.pdf", 5, "MapReduce was implemented on a shared-memory NUMA multiprocessor at Google.", 0),
    # Parallel topic models
    ("smola10.pdf", 1, "The implementation generates models at more than 75,000 documents per hour on a single 8-core computer.", 1),
    ("smola10.pdf", 1, "The UC Irvine LDA work used 1000 computers for 10 hours to process 8 million PubMed abstracts.", 1),
    ("smola10.pdf", 1, "Topic models represent objects as a mixture of a few classes rather than one class.", 1),
    ("smola10.pdf", 1, "The system processes one billion documents per hour on a GPU.", 0),
    # Open IE (ReVerb)
    ("fader11.pdf", 1, "Incoherent and uninformative extractions are frequent errors of Open IE systems like TextRunner and WOE.", 1),
    ("fader11.pdf", 1, "A syntactic constraint requires multi-word relation phrases to begin with a verb and end with a preposition.", 1),
    ("fader11.pdf", 1, "Light verb constructions cause uninformative extractions.", 1),
    ("fader11.pdf", 1, "Open IE systems need a hand-built ontology of relations before extraction.", 0),
    # Bunescu and Mooney
    ("bunescu-acl07.pdf", 1, "Multiple instance learning treats a positive bag as containing at least one positive example.", 1),
    ("bunescu-acl07.pdf", 1, "The approach extends SVM string kernels for relation extraction to weak MIL supervision.", 1),
    ("bunescu-acl07.pdf", 1, "The method requires thousands of manually annotated sentences for each relation.", 0),
    # SCISSOR
    ("mooney05.pdf", 1, "SCISSOR produces a semantically augmented parse tree with a syntactic and a semantic label on each node.", 1),
    ("mooney05.pdf", 1, "SCISSOR extends Collins' head-driven parsing model 2.", 1),
    ("mooney05.pdf", 1, "The experiments use Geoquery and the RoboCup coach language CLANG.", 1),
    ("mooney05.pdf", 1, "SCISSOR is trained without any annotated meaning representations.", 0),
    # Dyer: distributed learning for SMT
    ("dyer12.pdf", 1, "Discriminative learning in SMT has mostly been confined to small tuning sets of a few thousand examples.", 1),
    ("dyer12.pdf", 1, "Handcrafted features from Chiang et al. do not benefit from larger training sets.", 1),
    ("dyer12.pdf", 1, "Neural machine translation models were trained on billions of sentence pairs.", 0),
]

# Cross-paper negatives: a sentence paired with a passage of another paper (easy negatives,
# checked by hand not to be supported there either).
CROSS: list[tuple[int, str, int]] = [
    (0, "map-reduce.pdf", 1), (16, "smola10.pdf", 1), (21, "2023.eacl-main.121.pdf", 1), (29, "2020.acl-main.447.pdf", 9),
    (37, "papermage.pdf", 1), (42, "N18-3011.pdf", 1), (48, "fader11.pdf", 1), (53, "smola10.pdf", 1),
    (58, "map-reduce.pdf", 1), (62, "bunescu-acl07.pdf", 1), (66, "mooney05.pdf", 1), (69, "dyer12.pdf", 1),
    (72, "2020.acl-main.207.pdf", 1), (1, "2020.acl-main.447.pdf", 4), (22, "2020.acl-main.207.pdf", 8),
]


def main(home: str) -> None:
    engine = Engine(home)
    by_name = {Path(d.path).name: d for d in engine.documents()}

    def passage_text(paper: str, ordinal: int) -> tuple[str, str]:
        passage = engine.passages(by_name[paper].id)[ordinal]
        return passage.id, passage.text

    rows = []
    for paper, ordinal, sentence, label in PAIRS:
        pid, text = passage_text(paper, ordinal)
        rows.append({"sentence": sentence, "paper": paper, "passage_id": pid, "passage": text, "label": label,
                     "kind": "same passage"})
    for index, paper, ordinal in CROSS:
        pid, text = passage_text(paper, ordinal)
        rows.append({"sentence": PAIRS[index][2], "paper": paper, "passage_id": pid, "passage": text, "label": 0,
                     "kind": "other paper"})
    out = Path(__file__).with_name("support_pairs.jsonl")
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} pairs ({sum(r['label'] for r in rows)} supported) to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
