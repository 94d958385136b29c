#!/usr/bin/env bash
# eval.sh - run ppocr-vk (and the reference, when installed) on a manifest's images and score
# both against the ground truth, side by side.
#
#   tools/eval.sh [--no-cls] [--golden DIR] [--keep DIR] MANIFEST [-- PPOCR_EVAL_GT_OPTIONS...]
#
#   tools/eval.sh tests/data/corpus/manifest.tsv
#   tools/eval.sh --golden tests/golden/cls tests/data/corpus/manifest.tsv -- --verbose
#   tools/eval.sh --no-cls --golden tests/golden/nocls tests/data/corpus/manifest.tsv
#
# MANIFEST: tab-separated, columns `file` and `ground_truth` (see tests/data/corpus/manifest.tsv);
# image paths are relative to its folder.
# --no-cls       run both pipelines without the direction classifier
# --golden DIR   also compare ppocr-vk's output with these goldens (ppocr-eval golden)
# --keep DIR     keep the raw outputs (DIR/ppocr-vk.jsonl, DIR/reference/) instead of a temp dir
# Options after -- go to `ppocr-eval gt` (e.g. --verbose, --remove-spaces, --line-cer 0.2).
#
# Environment:
#   PPOCR_VK    ppocr-vk binary (default: build/ppocr-vk)
#   PPOCR_EVAL  ppocr-eval binary (default: build-eval/ppocr-eval, then build/ppocr-eval)
#   REF_HOME    installed reference (default: ~/.cache/ppocr-ref; see tools/ref/make-goldens.sh);
#               skipped when it has no ref_ocr.mjs, or when REF_HOME=none
# Exit status: 1 when ppocr-vk's overall CER is more than 0.5 points behind the reference's
# (when the reference ran), or when the golden comparison fails; 2 on usage errors.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cls_flag=()
golden=""
keep=""
manifest=""
eval_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-cls) cls_flag=(--no-cls); shift ;;
    --golden) golden=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --) shift; eval_opts=("$@"); break ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    -*) echo "eval.sh: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$manifest" ] || { echo "eval.sh: one MANIFEST only" >&2; exit 2; }; manifest=$1; shift ;;
  esac
done
[ -n "$manifest" ] || { sed -n '2,27p' "$0" >&2; exit 2; }

vk=${PPOCR_VK:-$repo/build/ppocr-vk}
ev=${PPOCR_EVAL:-}
if [ -z "$ev" ]; then
  for c in "$repo/build-eval/ppocr-eval" "$repo/build/ppocr-eval"; do
    [ -x "$c" ] && { ev=$c; break; }
  done
fi
[ -x "$vk" ] || { echo "eval.sh: no ppocr-vk at $vk (set PPOCR_VK)" >&2; exit 2; }
[ -n "$ev" ] && [ -x "$ev" ] || { echo "eval.sh: no ppocr-eval (build it, or set PPOCR_EVAL)" >&2; exit 2; }
ref_home=${REF_HOME:-$HOME/.cache/ppocr-ref}

mdir=$(cd "$(dirname "$manifest")" && pwd)
mapfile -t images < <(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "file") c = i; next }
                                  c && $c != "" { print $c }' "$manifest")
[ ${#images[@]} -gt 0 ] || { echo "eval.sh: no images in $manifest" >&2; exit 2; }

if [ -n "$keep" ]; then out=$keep; mkdir -p "$out"; else out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi

echo "ppocr-vk: ${#images[@]} images" >&2
# Relative paths, run from the manifest's folder: the JSON's "file" then matches the manifest.
(cd "$mdir" && "$vk" --format json "${cls_flag[@]}" "${images[@]}") > "$out/ppocr-vk.jsonl"

columns=("$out/ppocr-vk.jsonl")
names=ppocr-vk
behind=()
if [ "$ref_home" != none ] && [ -f "$ref_home/ref_ocr.mjs" ]; then
  # The reference names its outputs by basename: one run per folder keeps them apart.
  mapfile -t dirs < <(printf '%s\n' "${images[@]}" | xargs -n1 dirname | sort -u)
  for d in "${dirs[@]}"; do
    mapfile -t imgs < <(printf '%s\n' "${images[@]}" | awk -v d="$d" '{ n = $0; sub(/\/[^\/]*$/, "", n); if (index($0, "/") == 0) n = "."; if (n == d) print }')
    echo "reference: ${#imgs[@]} images in $d" >&2
    (cd "$mdir" && node "$ref_home/ref_ocr.mjs" --models "$ref_home/models" --out "$out/reference/$d" \
       --runs 1 --warmup 0 --quiet "${cls_flag[@]}" "${imgs[@]}" > /dev/null)
  done
  columns+=("$out/reference")
  names=$names,reference
  behind=(--max-behind 0.5)
else
  echo "reference: not installed in $ref_home; scoring ppocr-vk alone" >&2
fi

rc=0
"$ev" gt --names "$names" "${behind[@]}" "${eval_opts[@]}" "$manifest" "${columns[@]}" || rc=$?
if [ -n "$golden" ]; then
  echo
  echo "Parity with the goldens in $golden:"
  "$ev" golden "$golden" "$out/ppocr-vk.jsonl" || { r=$?; [ "$r" -gt "$rc" ] && rc=$r; }
fi
exit $rc
