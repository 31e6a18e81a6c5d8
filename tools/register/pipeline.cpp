#include "pipeline.h"

#include "tiff_io.h"

#include "flcc.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace registration {

std::vector<Job> make_jobs(Mode mode, int frame_count)
{
    std::vector<Job> jobs;
    switch (mode) {
    case Mode::reference:
        for (int i = 0; i < frame_count; ++i) jobs.push_back({i, i, -1});
        break;
    case Mode::pairs:
        for (int i = 1; i < frame_count; i += 2) jobs.push_back({i, i, i - 1});
        break;
    case Mode::sequence:
        for (int i = 1; i < frame_count; ++i) jobs.push_back({i, i, i - 1});
        break;
    }
    return jobs;
}

namespace {

std::atomic<int> stop_signal{0};

extern "C" void request_stop(int signal_number)
{
    stop_signal.store(signal_number);
    std::signal(signal_number, SIG_DFL);   // a second signal ends the process at once
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct FlccBuffer {
    void* data = nullptr;
    explicit FlccBuffer(size_t bytes) : data(bytes ? flcc_malloc(bytes) : nullptr) {}
    ~FlccBuffer() { flcc_free(data); }
    FlccBuffer(const FlccBuffer&) = delete;
    FlccBuffer& operator=(const FlccBuffer&) = delete;
    unsigned char* bytes() const { return static_cast<unsigned char*>(data); }
};

struct BatchSlot {
    long batch = -1;            // the batch this slot holds or is being filled with
    long first_job = 0;
    int job_count = 0;
    int decoded = 0;            // jobs decoded so far, failed ones included
    std::vector<std::string> errors;   // per position: why the job's frames could not be read
    std::unique_ptr<FlccBuffer> images, templates;   // page-locked frame buffers
    std::vector<flcc_peak> peaks;                    // [position][pair]
};

// A batch handed from the correlation to the writer.
struct WriteOrder {
    long batch;
    int rows_of;   // positions [0, rows_of) are written: correlated or (keep_going) skipped
};

class Pipeline {
public:
    Pipeline(const PipelineInputs& in, RegistrationPlan& plan, RegistrationPlan* maps_plan, OutputSink& sink,
             Progress& progress)
        : in_(in), config_(*in.config), plan_(plan), maps_plan_(maps_plan), sink_(sink), progress_(progress),
          formatter_(config_.format)
    {
        frames_per_batch_ = config_.frames_per_batch;
        job_count_ = long(in.jobs->size());
        batch_count_ = (job_count_ + frames_per_batch_ - 1) / frames_per_batch_;
        slot_count_ = int(std::min<long>(3, std::max<long>(batch_count_, 1)));
        map_frames_.insert(config_.map_frames.begin(), config_.map_frames.end());
    }

    PipelineOutcome run();

private:
    void assign_slot(BatchSlot& slot, long batch);
    void reader_loop();
    void writer_loop();
    std::string decode_job(const Job& job, BatchSlot& slot, int position, std::unique_ptr<TiffReader>& open_file);
    void correlate(BatchSlot& slot, int frames);
    void write_maps(BatchSlot& slot, int position);
    std::string format_batch(const BatchSlot& slot, int rows_of, long& skipped);
    void fail(const std::string& error);
    StageTimes times_locked() const;

    const PipelineInputs& in_;
    const Config& config_;
    RegistrationPlan& plan_;
    RegistrationPlan* maps_plan_;
    OutputSink& sink_;
    Progress& progress_;
    ResultFormatter formatter_;
    int frames_per_batch_ = 1;
    long job_count_ = 0, batch_count_ = 0;
    int slot_count_ = 1;
    std::set<long> map_frames_;

    std::vector<BatchSlot> slots_;
    std::mutex mutex_;
    std::condition_variable slot_filled_, slot_released_, write_ordered_;
    long next_job_ = 0;
    bool stopping_ = false;        // readers and writer finish what they must and exit
    bool correlation_done_ = false;
    std::deque<WriteOrder> write_queue_;
    std::string error_;
    long frames_written_ = 0, frames_skipped_ = 0;
    double read_seconds_ = 0, correlate_seconds_ = 0, write_seconds_ = 0;
};

void Pipeline::assign_slot(BatchSlot& slot, long batch)
{
    slot.batch = batch;
    slot.first_job = batch * frames_per_batch_;
    slot.job_count = int(std::max<long>(0, std::min<long>(frames_per_batch_, job_count_ - slot.first_job)));
    slot.decoded = 0;
    slot.errors.assign(size_t(frames_per_batch_), std::string());
}

void Pipeline::fail(const std::string& error)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) error_ = error;
    stopping_ = true;
    slot_filled_.notify_all();
    slot_released_.notify_all();
    write_ordered_.notify_all();
}

StageTimes Pipeline::times_locked() const
{
    StageTimes t;
    t.read_seconds = read_seconds_;
    t.readers = config_.readers;
    t.correlate_seconds = correlate_seconds_;
    t.write_seconds = write_seconds_;
    return t;
}

std::string Pipeline::decode_job(const Job& job, BatchSlot& slot, int position, std::unique_ptr<TiffReader>& open_file)
{
    const size_t bytes = plan_.frame_bytes();
    auto decode = [&](int index, unsigned char* destination) -> std::string {
        const FrameRef& frame = (*in_.frames)[size_t(index)];
        if (!frame.usable()) return frame.error;
        try {
            // Pages of one multi-page file follow each other: its handle stays open.
            if (!open_file || open_file->path() != frame.path) {
                open_file.reset();
                open_file = std::make_unique<TiffReader>(frame.path);
            }
            open_file->read_page(frame.page, destination);
        } catch (const InputError& e) {
            open_file.reset();
            return e.what();
        }
        return std::string();
    };
    std::string error = decode(job.moving, slot.images->bytes() + size_t(position) * bytes);
    if (error.empty() && job.reference >= 0) {
        error = decode(job.reference, slot.templates->bytes() + size_t(position) * bytes);
    }
    return error;
}

void Pipeline::reader_loop()
{
    std::unique_ptr<TiffReader> open_file;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_ && next_job_ < job_count_) {
        const long job_index = next_job_++;
        const long batch = job_index / frames_per_batch_;
        BatchSlot& slot = slots_[size_t(batch % slot_count_)];
        slot_released_.wait(lock, [&] { return stopping_ || slot.batch == batch; });
        if (stopping_) break;
        const int position = int(job_index - slot.first_job);
        lock.unlock();
        const auto start = Clock::now();
        std::string error = decode_job((*in_.jobs)[size_t(job_index)], slot, position, open_file);
        const double spent = seconds_since(start);
        lock.lock();
        read_seconds_ += spent;
        slot.errors[size_t(position)] = std::move(error);
        if (++slot.decoded == slot.job_count) slot_filled_.notify_all();
    }
}

void Pipeline::correlate(BatchSlot& slot, int frames)
{
    const void* templates = in_.reference_pixels ? in_.reference_pixels : slot.templates->data;
    plan_.exec(slot.images->data, templates, nullptr, slot.peaks.data(), frames);
}

void Pipeline::write_maps(BatchSlot& slot, int position)
{
    const Job& job = (*in_.jobs)[size_t(slot.first_job + position)];
    const flcc_size map = maps_plan_->map_size();
    const size_t map_elements = size_t(map.h) * size_t(map.w);
    std::vector<float> maps(map_elements * size_t(maps_plan_->pairs()));
    std::vector<flcc_peak> peaks(size_t(maps_plan_->pairs()));
    const size_t bytes = plan_.frame_bytes();
    const void* templates = in_.reference_pixels ? in_.reference_pixels
                                                 : slot.templates->bytes() + size_t(position) * bytes;
    maps_plan_->exec(slot.images->bytes() + size_t(position) * bytes, templates, maps.data(), peaks.data(), 1);
    char name[64];
    std::snprintf(name, sizeof name, "/frame_%06ld.tif", job.output_frame);
    TiffWriter writer(config_.maps_dir + name);
    for (int pair = 0; pair < maps_plan_->pairs(); ++pair) {
        writer.write_float32(maps.data() + size_t(pair) * map_elements, map.h, map.w);
    }
    writer.close();
}

std::string Pipeline::format_batch(const BatchSlot& slot, int rows_of, long& skipped)
{
    std::string text;
    const int pairs = plan_.pairs();
    const double centre = (config_.roi_size - 1) / 2.0;
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    for (int position = 0; position < rows_of; ++position) {
        const Job& job = (*in_.jobs)[size_t(slot.first_job + position)];
        const FrameRef& moved = (*in_.frames)[size_t(job.moving)];
        const std::string& error = slot.errors[size_t(position)];
        if (!error.empty()) {
            ++skipped;
            progress_.warn("frame " + std::to_string(job.output_frame) + " skipped: " + error);
        }
        for (int pair = 0; pair < pairs; ++pair) {
            const Subregion& s = (*in_.subregions)[size_t(pair)];
            ResultRow row;
            row.frame = job.output_frame;
            row.roi = pair;
            row.y = s.y + centre;
            row.x = s.x + centre;
            row.file = &moved.path;
            row.page = moved.page.index;
            if (error.empty()) {
                const flcc_peak& peak = slot.peaks[size_t(position) * size_t(pairs) + size_t(pair)];
                const Displacement d = plan_.displacement(peak);
                row.dy = d.dy;
                row.dx = d.dx;
                row.peak = peak.value;
                row.quality = peak.quality;
                row.psr = peak.psr;
            } else {
                row.dy = row.dx = row.peak = row.quality = row.psr = nan;
                row.skipped_reason = &error;
            }
            formatter_.append_row(text, row);
        }
    }
    return text;
}

void Pipeline::writer_loop()
{
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        write_ordered_.wait(lock, [&] { return !write_queue_.empty() || correlation_done_ || !error_.empty(); });
        if (write_queue_.empty()) break;   // correlation finished (or failed) and everything is written
        const WriteOrder order = write_queue_.front();
        write_queue_.pop_front();
        BatchSlot& slot = slots_[size_t(order.batch % slot_count_)];
        lock.unlock();
        const auto start = Clock::now();
        long skipped = 0;
        try {
            if (config_.decode_only) {
                for (int position = 0; position < order.rows_of; ++position) skipped += !slot.errors[size_t(position)].empty();
            } else {
                sink_.write(format_batch(slot, order.rows_of, skipped));
            }
        } catch (const InputError& e) {
            fail(e.what());
            return;
        }
        const double spent = seconds_since(start);
        lock.lock();
        write_seconds_ += spent;
        frames_written_ += order.rows_of;
        frames_skipped_ += skipped;
        const long written = frames_written_;
        const StageTimes times = times_locked();
        assign_slot(slot, order.batch + slot_count_);
        slot_released_.notify_all();
        lock.unlock();
        progress_.update(written, times);
        lock.lock();
    }
}

PipelineOutcome Pipeline::run()
{
    PipelineOutcome outcome;
    const size_t bytes = plan_.frame_bytes();
    const bool own_templates = in_.reference_pixels == nullptr;
    slots_.resize(size_t(slot_count_));
    for (int s = 0; s < slot_count_; ++s) {
        BatchSlot& slot = slots_[size_t(s)];
        slot.images = std::make_unique<FlccBuffer>(bytes * size_t(frames_per_batch_));
        if (own_templates) slot.templates = std::make_unique<FlccBuffer>(bytes * size_t(frames_per_batch_));
        if (!slot.images->data || (own_templates && !slot.templates->data)) {
            outcome.error = "cannot allocate " + std::to_string(bytes * size_t(frames_per_batch_) >> 20) +
                            " MiB for a batch of frames (lower --frames-per-batch)";
            return outcome;
        }
        slot.peaks.resize(size_t(frames_per_batch_) * size_t(plan_.pairs()));
        assign_slot(slot, s);
    }

    progress_.start();
    std::vector<std::thread> readers;
    for (int r = 0; r < config_.readers; ++r) readers.emplace_back(&Pipeline::reader_loop, this);
    std::thread writer(&Pipeline::writer_loop, this);

    for (long batch = 0; batch < batch_count_; ++batch) {
        BatchSlot& slot = slots_[size_t(batch % slot_count_)];
        {
            std::unique_lock<std::mutex> lock(mutex_);
            // Polled, so that a stop signal is noticed while waiting for the readers.
            while (!stopping_ && stop_signal.load() == 0 && !(slot.batch == batch && slot.decoded == slot.job_count)) {
                slot_filled_.wait_for(lock, std::chrono::milliseconds(50));
            }
            if (stopping_ || stop_signal.load() != 0) break;
        }
        int rows_of = slot.job_count;
        std::string read_error;
        for (int position = 0; position < slot.job_count; ++position) {
            if (slot.errors[size_t(position)].empty()) continue;
            if (!config_.keep_going) {
                rows_of = position;   // the frames before the failed one are still registered
                read_error = slot.errors[size_t(position)];
                break;
            }
            // A skipped frame's place is correlated as zeros (cheaper than compacting the batch);
            // its peaks are not used.
            std::memset(slot.images->bytes() + size_t(position) * bytes, 0, bytes);
            if (own_templates) std::memset(slot.templates->bytes() + size_t(position) * bytes, 0, bytes);
        }
        const auto start = Clock::now();
        try {
            if (rows_of > 0 && !config_.decode_only) correlate(slot, rows_of);
            if (maps_plan_ && !config_.decode_only) {
                for (int position = 0; position < rows_of; ++position) {
                    const long frame = (*in_.jobs)[size_t(slot.first_job + position)].output_frame;
                    if (map_frames_.count(frame) && slot.errors[size_t(position)].empty()) write_maps(slot, position);
                }
            }
        } catch (const std::exception& e) {
            fail(e.what());
            break;
        }
        const double spent = seconds_since(start);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            correlate_seconds_ += spent;
            if (rows_of > 0) write_queue_.push_back({batch, rows_of});
            write_ordered_.notify_all();
        }
        if (!read_error.empty()) {
            fail(read_error);
            break;
        }
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        correlation_done_ = true;
        stopping_ = true;   // readers stop; the writer drains its queue first
        slot_released_.notify_all();
        write_ordered_.notify_all();
    }
    writer.join();
    for (std::thread& reader : readers) reader.join();

    outcome.frames_written = frames_written_;
    outcome.frames_skipped = frames_skipped_;
    outcome.error = error_;
    outcome.signal = error_.empty() ? stop_signal.load() : 0;
    outcome.times = times_locked();
    return outcome;
}

}  // namespace

void install_signal_handlers()
{
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    std::signal(SIGPIPE, SIG_IGN);
}

PipelineOutcome run_pipeline(const PipelineInputs& inputs, RegistrationPlan& plan, RegistrationPlan* maps_plan,
                             OutputSink& sink, Progress& progress)
{
    Pipeline pipeline(inputs, plan, maps_plan, sink, progress);
    return pipeline.run();
}

}  // namespace registration
