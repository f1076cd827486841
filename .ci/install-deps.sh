#!/bin/sh
# Installs what napkin needs to build and test on Debian 12: a compiler, CMake and the
# libraries, all from Debian's packages. Works as root (no sudo needed) or as a sudoer.
set -eu
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  g++ make cmake \
  libcli11-dev libtomlplusplus-dev libfmt-dev doctest-dev nlohmann-json3-dev libopenblas-dev \
  groff-base man-db zsh \
  clang libclang-rt-14-dev >/dev/null  # the fuzzers: clang 14 and its libFuzzer runtime
echo "napkin: build dependencies installed"
