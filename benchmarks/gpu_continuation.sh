#!/usr/bin/env bash
# Continue the cpu studies' headline comparisons on a lent GPU (issue 52), as one prepared script:
#
#   bash benchmarks/gpu_continuation.sh FIRST_SEED LAST_SEED [JOBS]     # e.g. 15 20 4
#
# For each study, `cselab reproduce STUDY --profile cpu --replan --runs-only --only <groups at those seeds>`:
# the same configs as the CPU continuation (one run folder per config, shared by the studies through runs/),
# trained on the GPU. Each record line says where it ran (cpu.native_bf16 = cuda, the torch build, the
# backbone's hash), so a seed's pair is one computation only with its partner trained here too; the claims
# pair seeds by that rule. The studies' records (new lines only matter) and a log go to $OUT (or
# ./gpu_continuation). On a closed machine, .gpucarry/prep.sh (not committed: the backbone and the data
# slice, carried) is run first when it is there; its data root is used.
set -u
cd "$(dirname "$0")/.."
FIRST=${1:?first seed}
LAST=${2:?last seed}
JOBS=${3:-4}
DEADLINE=${DEADLINE:-480}   # seconds: the script ends by itself before the device's limit, records copied
OUTDIR="${OUT:-gpu_continuation}"
mkdir -p "$OUTDIR"
LOG="$OUTDIR/gpu_continuation.txt"
PY="${PYTHON:-python3}"
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START )) s] $*" | tee -a "$LOG"; }

log "gpu_continuation seeds $FIRST-$LAST, $JOBS jobs, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$LOG"
DATA="${CSELAB_DATA:-data}"
if [ -f .gpucarry/prep.sh ]; then
    bash .gpucarry/prep.sh 2>&1 | tail -2 | tee -a "$LOG"
    export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
    [ -d /tmp/gpu/data/downstream ] && DATA=/tmp/gpu/data
fi
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
log "data root: $DATA; $("$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())')"

# the headline comparisons: each method that needs at most 20 seeds against SimCSE (docs/cpu-papers.md)
# (GROUPS_SPEC="study:group group;study:group ..." names others: their pairs need their partners' seeds here too)
STUDIES=("paper-mixcse:simcse mixcse" "paper-apincse:simcse apincse" "paper-gs-infonce:simcse gs_infonce"
         "cpu-compare:simcse mixcse gs_infonce apincse")
[ -n "${GROUPS_SPEC:-}" ] && IFS=';' read -r -a STUDIES <<< "$GROUPS_SPEC"
for spec in "${STUDIES[@]}"; do
    study=${spec%%:*}
    labels=()
    for group in ${spec#*:}; do
        for seed in $(seq "$FIRST" "$LAST"); do labels+=("$group-s$seed"); done
    done
    left=$(( DEADLINE - ($(date +%s) - START) ))
    [ "$left" -lt 30 ] && { log "deadline: $study not started"; continue; }
    log "cselab reproduce $study --only ${labels[*]} (at most $left s)"
    timeout "$left" "$PY" -m cselab reproduce "$study" --profile cpu --replan --runs-only --jobs "$JOBS" \
        --data-dir "$DATA" --only "${labels[@]}" 2>&1 | grep -aE "^(run |study |record|cselab)" | tee -a "$LOG"
    log "exit status ${PIPESTATUS[0]}"
done
for record in figures/cpu-papers/*/record.jsonl figures/cpu-compare/record.jsonl; do
    name=$(basename "$(dirname "$record")")
    cp "$record" "$OUTDIR/$name.record.jsonl"
done
log "done"
