// Feeds an experiment file (File > Open experiment) to experimentFromJson. Beyond no crash: only
// InputError escapes, and an experiment read is written by experimentToJson and read again to the
// same file (configs, runs with their live changes, annotations and the dashboard layout).
#include "engine/core/errors.h"
#include "tests/fuzz/fuzz_support.h"
#include "ui/experiment/experiment_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    normlab::ui::Experiment experiment;
    try {
        experiment = normlab::ui::experimentFromJson(bytes, QStringLiteral("fuzz.normlab"));
    } catch (const normlab::InputError&) {
        return 0;
    }
    const QByteArray written = normlab::ui::experimentToJson(experiment);
    try {
        const normlab::ui::Experiment again =
            normlab::ui::experimentFromJson(written, QStringLiteral("again"));
        FUZZ_CHECK(normlab::ui::experimentToJson(again) == written,
                   "experiment round trip changed it: " + written.toStdString());
    } catch (const normlab::InputError& error) {
        FUZZ_CHECK(false, "an experiment's own file is refused (" + std::string(error.what()) +
                              "): " + written.toStdString());
    }
    return 0;
}
