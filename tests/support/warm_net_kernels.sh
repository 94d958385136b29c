#!/bin/sh
# The first test of the nets on Vulkan: the command reads the sample as it is and a word image with
# --paddle-parity, so that the driver's shader cache holds the nets' kernels (those of a page's
# sizes among them) before the other tests of the nets start, two at a time. On lavapipe each
# kernel compiles with LLVM at its first dispatch (seconds each under ASan): unwarmed, two tests
# starting side by side would both compile the same kernels.
#   sh tests/support/warm_net_kernels.sh PATH/TO/ppocr-vk SOURCE_DIR
set -eu
bin=$1
"$bin" --device vulkan "$2/tests/data/sample.png" >/dev/null
"$bin" --device vulkan --paddle-parity "$2/tests/data/corpus/paddleocr/en_word_1.png" >/dev/null
