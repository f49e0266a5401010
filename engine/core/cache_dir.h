// The user's cache folder for NormLab: $XDG_CACHE_HOME/normlab when that is an absolute path, else
// $HOME/.cache/normlab; empty when neither is set (then nothing is cached). Holds the GPU self-check's
// verdicts and the BPE tokenizers trained from texts (docs/model.md#tokenizers).
#pragma once
#include <string>

namespace normlab {

std::string normlab_cache_dir();

}  // namespace normlab
