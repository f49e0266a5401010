// Where the files that ship with NormLab (the corpus) are found: $NORMLAB_RESOURCE_DIR when set, else
// beside the running executable as installed (<prefix>/bin -> <prefix>/share/normlab), else the source
// tree the binary was built from. Installed binaries never depend on the source tree.
#pragma once
#include <string>

namespace normlab {

// The folder holding corpus.txt (the first of the candidates above that has one).
std::string resource_dir();

}  // namespace normlab
