// Linked into every test program that trains: installs NormLab's GPU self-check before main, as the
// front ends' main() does, so a test picks a GPU exactly as normlab-cli and the window would.
#include "engine/selfcheck/gpu_selftest.h"

namespace {
const bool kInstalled = (normlab::install_gpu_selfcheck(), true);
}  // namespace
