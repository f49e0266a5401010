// Trainer::switch_backend (a live run moved onto another backend between two steps, all or nothing)
// and the live changes of `device` and `threads`, which build the new backend with make_backend.
#include "engine/model/backend_transfer.h"
#include "engine/train/trainer.h"

namespace normlab {

void Trainer::switch_backend(std::unique_ptr<Backend> next, std::string reason) {
    {
        BackendTransfer transfer(*m_backend, *next);
        m_model->stage_move(transfer);
        m_optimizer->stage_move(transfer);
        transfer.commit();  // nothing above changed the run; from here on nothing throws
    }
    m_model->moved_to(*next);
    m_backend = std::move(next);  // the old backend goes; its buffers were released by commit()
    m_device_reason = std::move(reason);
}

// make_backend throws ResourceError for a device that cannot be had (device=cuda without a GPU)
// before anything moved.
void Trainer::switch_to_device_of(const Config& next) {
    std::string reason;
    std::unique_ptr<Backend> backend = make_backend(next.device, next.threads, &reason);
    switch_backend(std::move(backend), std::move(reason));
}

}  // namespace normlab
