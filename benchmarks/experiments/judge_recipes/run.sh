#!/usr/bin/env bash
# On a CUDA machine: four training recipes side by side on one GPU, each judged, one chosen, its weights packed.
#   bash benchmarks/experiments/judge_recipes/run.sh INPUTS
# INPUTS holds base/ (pack_base.py's output), judge-data.jsonl.xz (judge_data.py --conclusions, xz-compressed
# so that everything travels under 64 MiB) and healthver_dev.csv. Results go to $OUT (eval.json, logs, weights).
IN=${1:?the folder of inputs}
HERE=$(dirname "$0")
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
SECONDS=0
OUT=${OUT:-/tmp/out}; mkdir -p $OUT /tmp/logs
nvidia-smi -L; python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__, torch.cuda.is_available())"
python3 -c "import lzma,gzip; gzip.open('/tmp/data.jsonl.gz','wb',compresslevel=1).write(lzma.open('$IN/judge-data.jsonl.xz').read())" || exit 1
[ -d /tmp/base ] || python3 $HERE/unpack_base.py $IN/base /tmp/base || exit 1
T="python3 benchmarks/train_judge.py train --base /tmp/base --data /tmp/data.jsonl.gz --log-every 400 --checkpoint-minutes 100 --fresh --epochs ${EPOCHS:-2} --max-minutes ${MAXMIN:-5.5} --threads 4 $EXTRA"
ORIG="--sources checkcovid climate-fever fever snli synthetic-datastore synthetic-pubmedqa vitaminc"
$T --work /tmp/base2 $ORIG > /tmp/logs/base2.txt 2>&1 &
$T --work /tmp/conc --repeat pubmedqa-conclusions=2 > /tmp/logs/conc.txt 2>&1 &
$T --work /tmp/conc29 --repeat pubmedqa-conclusions=2 --seed 29 > /tmp/logs/conc29.txt 2>&1 &
$T --work /tmp/sci --repeat pubmedqa-conclusions=3 checkcovid=3 climate-fever=2 synthetic-pubmedqa=2 > /tmp/logs/sci.txt 2>&1 &
wait
echo "trained at $SECONDS s"
for r in base2 conc conc29 sci; do grep -v '"step"' /tmp/logs/$r.txt | grep -v Loading | tail -4; cp /tmp/$r/log.jsonl /tmp/logs/log-$r.jsonl 2>/dev/null; done
HEALTHVER=$IN/healthver_dev.csv python3 $HERE/eval_runs.py $OUT /tmp/base /tmp/data.jsonl.gz /tmp/base2 /tmp/conc /tmp/conc29 /tmp/sci
tar czf $OUT/logs.tar.gz -C /tmp/logs .
ls -la $OUT; echo "total $SECONDS s"
