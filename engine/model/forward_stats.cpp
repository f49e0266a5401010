// ForwardStats' reserve and clear, walking its field tables (forward_stats.h): the one place that knows
// how long each list gets and which lists a pass empties.
#include "engine/model/forward_stats.h"

#include <algorithm>

#include "engine/model/sublayer_slots.h"

namespace normlab {

namespace forward_fields {

int stack_blocks(const ModelConfig& model, StackMask stack) {
    const int encoder = std::max(0, model.encoder_layers);
    if (stack == kEncoder) return encoder;
    if (stack == kCross) return encoder > 0 ? model.layers : 0;
    return model.layers;
}

}  // namespace forward_fields

void ForwardStats::reserve(const ModelConfig& model) {
    using namespace forward_fields;
    for (const Stack& stack : kStacks) {
        const size_t blocks = static_cast<size_t>(stack_blocks(model, stack.mask));
        for (const BlockList& field : kBlockLists) {
            if (!(field.stacks & stack.mask)) continue;
            const size_t length = field.per_head ? blocks * static_cast<size_t>(model.heads) : blocks;
            std::vector<double>& list = (this->*stack.member).*field.member;
            if (field.filled == Filled::kEveryPass) {
                list.resize(length);
            } else {
                list.reserve(length);
            }
        }
    }
    const size_t slots = static_cast<size_t>(SublayerSlots(model).count());
    for (const SublayerList& field : kSublayerLists) (sublayers.*field.member).reserve(slots);
}

void ForwardStats::clear_telemetry() {
    using namespace forward_fields;
    for (const Stack& stack : kStacks) {
        StackStats& values = this->*stack.member;
        for (const BlockList& field : kBlockLists) {
            if (field.filled != Filled::kEveryPass) (values.*field.member).clear();
        }
        for (const StackScalar& field : kStackScalars) values.*field.member = kNotRecorded;
    }
    for (const SublayerList& field : kSublayerLists) (sublayers.*field.member).clear();
}

}  // namespace normlab
