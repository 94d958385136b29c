#!/usr/bin/env bash
# eval-layout.sh - reading order side by side: ppocr-vk and Tesseract on the corpus's layout/
# pages (two-column papers, book scans, receipts), scored by `ppocr-eval gt`.
#
#   tools/eval-layout.sh [--keep DIR] [--reuse] [--no-tesseract] [CORPUS] [-- PPOCR_EVAL_GT_OPTIONS...]
#
#   tools/eval-layout.sh                      # both tools, outputs kept in /tmp/layout-eval
#   tools/eval-layout.sh --reuse -- --verbose # score the kept outputs again, every line shown
#
# Prints a markdown table, one row per page and the overall rows, with for each tool the
# order-free CER, line recall, ordered CER (the output's lines in their order against the GT in
# reading order) and receipt row pairs (tools/eval/README.md).
# CORPUS         folder holding manifest.tsv and layout/ (default: ../shared/corpus beside the
#                repository). Its pages are read where they are, never copied.
# --keep DIR     where the outputs go (default /tmp/layout-eval): DIR/ppocr-vk.jsonl,
#                DIR/ppocr-vk.stderr, DIR/tesseract/layout/IMAGE.txt (one file per page, named
#                after the image with its extension: sroie_007.jpg.txt)
# --reuse        score the outputs already in DIR instead of running the tools
# --no-tesseract ppocr-vk alone
# Options after -- go to `ppocr-eval gt` (e.g. --verbose, --max-ordered-cer 10).
#
# Tesseract (Debian's tesseract-ocr, tesseract-ocr-eng, tesseract-ocr-chi-sim) is a peer to
# measure against, not something the project needs: install it by hand. It reads each page with
# `-l eng`, or `-l eng+chi_sim` when the page's GT holds Han characters; its text, one line per
# line, is what ppocr-eval reads from the .txt files.
#
# Environment:
#   PPOCR_VK    ppocr-vk binary (default: build/ppocr-vk)
#   PPOCR_EVAL  ppocr-eval binary (default: build-eval/ppocr-eval, then build/ppocr-eval)
#   TESSERACT   tesseract binary (default: tesseract on PATH)
# Exit status: ppocr-eval's (1 when an option after -- sets a target that is missed); 2 on usage
# errors.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
keep=/tmp/layout-eval
reuse=0
tess_on=1
corpus=""
eval_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=$2; shift 2 ;;
    --reuse) reuse=1; shift ;;
    --no-tesseract) tess_on=0; shift ;;
    --) shift; eval_opts=("$@"); break ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    -*) echo "eval-layout.sh: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$corpus" ] || { echo "eval-layout.sh: one CORPUS only" >&2; exit 2; }; corpus=$1; shift ;;
  esac
done
corpus=${corpus:-$repo/../shared/corpus}
manifest=$corpus/manifest.tsv
[ -f "$manifest" ] && [ -d "$corpus/layout" ] || { echo "eval-layout.sh: no manifest.tsv and layout/ in $corpus" >&2; exit 2; }
corpus=$(cd "$corpus" && pwd)

vk=${PPOCR_VK:-$repo/build/ppocr-vk}
ev=${PPOCR_EVAL:-}
if [ -z "$ev" ]; then
  for c in "$repo/build-eval/ppocr-eval" "$repo/build/ppocr-eval"; do
    [ -x "$c" ] && { ev=$c; break; }
  done
fi
[ -n "$ev" ] && [ -x "$ev" ] || { echo "eval-layout.sh: no ppocr-eval (build it, or set PPOCR_EVAL)" >&2; exit 2; }
tess=${TESSERACT:-tesseract}

mapfile -t pages < <(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "file") c = i; next }
                                 c && $c ~ /^layout\// { print $c }' "$manifest")
[ ${#pages[@]} -gt 0 ] || { echo "eval-layout.sh: no layout/ rows in $manifest" >&2; exit 2; }
mkdir -p "$keep"

if [ "$reuse" = 0 ]; then
  [ -x "$vk" ] || { echo "eval-layout.sh: no ppocr-vk at $vk (set PPOCR_VK)" >&2; exit 2; }
  echo "ppocr-vk: ${#pages[@]} pages, one process" >&2
  start=$(date +%s)
  # Relative paths, run from the corpus folder: the JSON's "file" then matches the manifest. A page
  # it cannot read is left out of the JSON (scored as empty, marked *) and named in the stderr file.
  vk_rc=0
  (cd "$corpus" && "$vk" --format json "${pages[@]}") > "$keep/ppocr-vk.jsonl" 2> "$keep/ppocr-vk.stderr" || vk_rc=$?
  echo "ppocr-vk: $(( $(date +%s) - start )) s, exit status $vk_rc" >&2
  if [ "$tess_on" = 1 ]; then
    command -v "$tess" > /dev/null || { echo "eval-layout.sh: no $tess (apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim, or --no-tesseract)" >&2; exit 2; }
    rm -rf "$keep/tesseract"
    start=$(date +%s)
    for p in "${pages[@]}"; do
      lang=eng
      gt=$corpus/${p%.*}.gt.txt
      [ -f "$gt" ] && grep -qP '\p{Han}' "$gt" && lang=eng+chi_sim
      mkdir -p "$keep/tesseract/$(dirname "$p")"
      "$tess" "$corpus/$p" - -l "$lang" > "$keep/tesseract/$p.txt" 2> /dev/null \
        || { echo "tesseract: $p failed" >&2; rm -f "$keep/tesseract/$p.txt"; }
    done
    echo "tesseract: ${#pages[@]} pages, $(( $(date +%s) - start )) s" >&2
  fi
fi
[ -f "$keep/ppocr-vk.jsonl" ] || { echo "eval-layout.sh: no $keep/ppocr-vk.jsonl (run without --reuse)" >&2; exit 2; }
if [ -s "$keep/ppocr-vk.stderr" ]; then
  echo "ppocr-vk's errors (these pages are scored as empty and marked *):" >&2
  sed 's/^/  /' "$keep/ppocr-vk.stderr" >&2
fi

columns=("$keep/ppocr-vk.jsonl")
names=ppocr-vk
if [ "$tess_on" = 1 ] && [ -d "$keep/tesseract" ]; then
  columns+=("$keep/tesseract")
  names=$names,tesseract
fi
"$ev" gt --only 'layout/*' --names "$names" "${eval_opts[@]}" "$manifest" "${columns[@]}"
