// Saves and restores trainers through safetensors files, checking every tensor's presence and shape.
// The progress metadata (normlab_step, normlab_schedule_origin, a loss scale's state) is parsed
// strictly: garbage is an InputError naming the file, never a silently wrong step.
#include "engine/io/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/number_format.h"
#include "engine/io/safetensors.h"
#include "engine/train/trainer.h"

namespace normlab {

namespace {
const char* kFirstMoment = "optimizer.m.";
const char* kSecondMoment = "optimizer.v.";

// A step count from the metadata: the whole text must be a decimal integer >= 0.
int64_t metadata_count(const std::map<std::string, std::string>& metadata, const std::string& key,
                       const std::string& path) {
    const std::string& text = metadata.at(key);
    int64_t value = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0) {
        std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
        throw InputError("checkpoint '" + path + "': metadata " + key + " is '" + shown +
                         "', not a step count (an integer >= 0); the file is corrupt or was not written by "
                         "NormLab");
    }
    return value;
}

const LoadedTensor& checked_tensor(const SafetensorsFile& file, const std::string& name,
                                   const ParamEntry& entry, const std::string& path) {
    const auto it = file.tensors.find(name);
    if (it == file.tensors.end()) {
        throw InputError("checkpoint '" + path + "' lacks tensor '" + name + "' that this model needs");
    }
    if (it->second.shape != entry.shape) {
        throw InputError("checkpoint '" + path + "': tensor '" + name + "' has shape " +
                         shape_to_string(it->second.shape) + " but the model expects " +
                         shape_to_string(entry.shape));
    }
    return it->second;
}

// A checkpoint of a larger model (more blocks, an encoder, a gate) loaded into this one would be cut down
// without a word: every tensor the file holds must be one of the model's parameters or their moments.
void require_no_extra_tensors(const SafetensorsFile& file, const Model& model, const std::string& path) {
    std::set<std::string> expected;
    const auto& entries = model.layout().entries;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        for (const std::string& prefix :
             {std::string(), std::string(kFirstMoment), std::string(kSecondMoment)})
            expected.insert(prefix + entries[i].name);
    }
    for (const Model::StateBuffer& buffer : model.feature_norm_buffers()) expected.insert(buffer.name);
    size_t extra = 0;
    std::string first;
    for (const auto& [name, tensor] : file.tensors)
        if (!expected.count(name) && extra++ == 0) first = name;
    if (extra > 0)
        throw InputError("checkpoint '" + path + "' holds " + std::to_string(extra) +
                         " tensor(s) this config's model has none of (the first: '" + text_excerpt(first) +
                         "'): it is the checkpoint of another model (more blocks, an encoder, other "
                         "keys); keep the checkpoint's model keys");
}

}  // namespace

int checkpoint_vocab(const SafetensorsFile& file, const std::string& path) {
    const auto wte = file.tensors.find("wte.weight");
    if (wte == file.tensors.end() || wte->second.shape.size() != 2)
        throw InputError("checkpoint '" + path + "' has no 2-D wte.weight tensor");
    return static_cast<int>(wte->second.shape[0]);
}

void load_parameters(const SafetensorsFile& file, Model& model, const std::string& path) {
    const auto& entries = model.layout().entries;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        model.write_entry(static_cast<int>(i), checked_tensor(file, entries[i].name, entries[i], path).data);
    }
    for (const Model::StateBuffer& buffer : model.feature_norm_buffers()) {
        ParamEntry shape;  // the state is a vector of one value per feature
        shape.shape = {buffer.count};
        const std::vector<float>& values = checked_tensor(file, buffer.name, shape, path).data;
        model.backend().upload(buffer.data, values.data(), values.size());
    }
    model.keep_feature_norms();
}

namespace {
// A trainer's checkpoint as tensors to write: names and shapes (no host data), where each one's floats
// lie in backend memory, and the metadata: parameters, then each one's two Adam moments.
struct CheckpointPlan {
    std::vector<TensorRef> tensors;
    std::vector<const float*> sources;
    std::map<std::string, std::string> metadata;
};

CheckpointPlan checkpoint_plan(Trainer& trainer) {
    Model& model = trainer.model();
    const auto& entries = model.layout().entries;
    CheckpointPlan plan;
    const auto add = [&plan](std::string name, const std::vector<int64_t>& shape, const float* source) {
        plan.tensors.push_back({std::move(name), shape, nullptr});
        plan.sources.push_back(source);
    };
    for (size_t i = 0; i < entries.size(); ++i)
        if (model.active(static_cast<int>(i)))
            add(entries[i].name, entries[i].shape, model.params() + entries[i].offset);
    for (const Model::StateBuffer& buffer : model.feature_norm_buffers())
        add(buffer.name, {buffer.count}, buffer.data);
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        add(kFirstMoment + entries[i].name, entries[i].shape,
            trainer.optimizer().first_moment() + entries[i].offset);
        add(kSecondMoment + entries[i].name, entries[i].shape,
            trainer.optimizer().second_moment() + entries[i].offset);
    }
    plan.metadata = {{"format", "normlab-checkpoint-1"},
                     {"normlab_config", config_to_json_text(trainer.config())},
                     {"normlab_step", std::to_string(trainer.steps_done())},
                     {"normlab_schedule_origin", std::to_string(trainer.schedule_origin())}};
    // The losses loss-spike detection looks back on, so a resume or a fork flags a spike at its first step.
    plan.metadata["normlab_recent_losses"] = nlohmann::json(trainer.loss_spikes().recent()).dump();
    const LossScaler& scaler = trainer.loss_scaler();
    if (scaler.active()) {  // a dynamic scale's state, so a resume or a fork goes on from it
        plan.metadata["normlab_loss_scale"] = format_number(scaler.scale());
        plan.metadata["normlab_loss_scale_finite_steps"] = std::to_string(scaler.finite_in_a_row());
        plan.metadata["normlab_skipped_steps"] = std::to_string(scaler.skipped());
    }
    return plan;
}

// The checkpoint's bytes, each tensor downloaded straight into its place; `what` names it in messages.
std::string checkpoint_file_bytes(Trainer& trainer, const std::string& what, std::string reuse) {
    const CheckpointPlan plan = checkpoint_plan(trainer);
    Backend& backend = trainer.model().backend();
    return safetensors_bytes_filled(
        what, plan.tensors, plan.metadata,
        [&](size_t i, float* destination) {
            size_t count = 1;
            for (const int64_t dim : plan.tensors[i].shape) count *= static_cast<size_t>(dim);
            backend.download(destination, plan.sources[i], count);
        },
        std::move(reuse));
}

// The loss scale a checkpoint kept (train.loss_scale set), restored; a checkpoint without it (no loss
// scale, an older file) leaves the trainer's scale where its config starts it.
void restore_loss_scale(const std::map<std::string, std::string>& metadata, Trainer& trainer,
                        const std::string& path) {
    const auto scale_text = metadata.find("normlab_loss_scale");
    if (scale_text == metadata.end() || !metadata.count("normlab_loss_scale_finite_steps") ||
        !metadata.count("normlab_skipped_steps"))
        return;
    double scale = 0.0;
    const std::string& text = scale_text->second;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), scale);
    if (error != std::errc() || end != text.data() + text.size())
        throw InputError("checkpoint '" + path + "': metadata normlab_loss_scale is '" + text.substr(0, 40) +
                         "', not a number; the file is corrupt or was not written by NormLab");
    trainer.loss_scaler().restore(scale, metadata_count(metadata, "normlab_loss_scale_finite_steps", path),
                                  metadata_count(metadata, "normlab_skipped_steps", path));
}

// The trailing losses a checkpoint kept for loss-spike detection, restored; a checkpoint without them
// (an older file) leaves the window empty, to fill again over the first steps.
void restore_recent_losses(const std::map<std::string, std::string>& metadata, Trainer& trainer,
                           const std::string& path) {
    const auto text = metadata.find("normlab_recent_losses");
    if (text == metadata.end()) return;
    const std::optional<nlohmann::json> losses = parse_json_or_nothing(text->second);
    if (!losses || !losses->is_array() ||
        !std::all_of(losses->begin(), losses->end(),
                     [](const nlohmann::json& value) { return value.is_number(); }))
        throw InputError("checkpoint '" + path + "': metadata normlab_recent_losses is '" +
                         text_excerpt(text->second, 40) +
                         "', not a list of numbers; the file is corrupt or was not written by NormLab");
    trainer.restore_loss_spikes(losses->get<std::vector<double>>());
}
}  // namespace

void save_checkpoint(Trainer& trainer, const std::string& path, const WriteFence& fence) {
    const std::string what = "checkpoint '" + path + "'";
    const std::string bytes = checkpoint_file_bytes(trainer, what, {});
    write_file_atomically(
        path,
        [&bytes](std::ostream& file) {
            file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        },
        "cannot write " + what, fence);
}

std::string checkpoint_bytes(Trainer& trainer, std::string reuse) {
    return checkpoint_file_bytes(trainer, "a checkpoint in memory", std::move(reuse));
}

Config checkpoint_config(const std::string& path) {
    const SafetensorsFile file = read_safetensors(path);
    const auto found = file.metadata.find("normlab_config");
    if (found == file.metadata.end()) {
        throw InputError("'" + path +
                         "' is a safetensors file but not a NormLab checkpoint (no normlab_config in "
                         "its metadata)");
    }
    return config_from_json_text(found->second, path + " (normlab_config)");
}

int64_t checkpoint_step(const std::string& path) {
    const std::map<std::string, std::string> metadata = read_safetensors_metadata(path);
    if (!metadata.count("normlab_step"))
        throw InputError("'" + path + "' is not a NormLab checkpoint (no normlab_step in its metadata)");
    return metadata_count(metadata, "normlab_step", path);
}

std::unique_ptr<Trainer> load_checkpoint(const std::string& path, const std::vector<std::string>& overrides) {
    const SafetensorsFile file = read_safetensors(path);
    const auto config_text = file.metadata.find("normlab_config");
    const auto step_text = file.metadata.find("normlab_step");
    if (config_text == file.metadata.end() || step_text == file.metadata.end()) {
        throw InputError("'" + path +
                         "' is not a NormLab checkpoint (normlab_config / normlab_step missing)");
    }
    Config config = config_from_json_text(config_text->second, path + " (normlab_config)");
    for (const std::string& assignment : overrides) apply_override(config, assignment);
    const int64_t step = metadata_count(file.metadata, "normlab_step", path);
    const int64_t origin = file.metadata.count("normlab_schedule_origin")
                               ? metadata_count(file.metadata, "normlab_schedule_origin", path)
                               : 0;
    if (origin > step) {
        throw InputError("checkpoint '" + path + "': normlab_schedule_origin (" + std::to_string(origin) +
                         ") is after normlab_step (" + std::to_string(step) +
                         "); the file's metadata is corrupt, use another checkpoint");
    }

    auto trainer = std::make_unique<Trainer>(config);
    Model& model = trainer->model();
    require_no_extra_tensors(file, model, path);
    load_parameters(file, model, path);
    const auto& entries = model.layout().entries;
    const size_t total = model.layout().total;
    std::vector<float> first(total, 0.0f), second(total, 0.0f);
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        const auto& m = checked_tensor(file, kFirstMoment + entries[i].name, entries[i], path).data;
        const auto& v = checked_tensor(file, kSecondMoment + entries[i].name, entries[i], path).data;
        std::copy(m.begin(), m.end(), first.begin() + static_cast<long>(entries[i].offset));
        std::copy(v.begin(), v.end(), second.begin() + static_cast<long>(entries[i].offset));
    }
    model.backend().upload(trainer->optimizer().first_moment(), first.data(), total);
    model.backend().upload(trainer->optimizer().second_moment(), second.data(), total);
    trainer->restore_progress(step, origin);
    restore_loss_scale(file.metadata, *trainer, path);
    restore_recent_losses(file.metadata, *trainer, path);
    return trainer;
}

}  // namespace normlab
