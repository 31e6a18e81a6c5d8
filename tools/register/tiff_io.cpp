#include "tiff_io.h"

#include <tiffio.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace registration {

namespace {

// libtiff reports through handlers; each open file collects its messages here, so concurrent
// readers of different files never mix them and nothing reaches the terminal unasked.
struct MessageLog {
    std::string errors;
    void add(const char* module, const char* fmt, va_list ap)
    {
        char text[512];
        std::vsnprintf(text, sizeof text, fmt, ap);
        if (!errors.empty()) errors += "; ";
        errors += text;
        (void)module;
    }
};

int collect_error(TIFF*, void* user_data, const char* module, const char* fmt, va_list ap)
{
    static_cast<MessageLog*>(user_data)->add(module, fmt, ap);
    return 1;   // handled: libtiff's global handler (which prints) is not called
}

int ignore_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

// Opens `path` with libtiff on a descriptor of our own, so that a missing or unreadable file is
// reported with the system's reason. Reading never memory-maps the file ("m"): a file truncated
// while mapped would kill the process with SIGBUS instead of giving a read error.
TIFF* open_tiff(const std::string& path, const char* mode, MessageLog& log)
{
    const bool writing = mode[0] == 'w';
    const int fd = writing ? ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)
                           : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw TiffError(path + ": cannot open " + (writing ? "for writing" : "for reading") + ": " +
                        std::strerror(errno));
    }
    TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
    TIFFOpenOptionsSetErrorHandlerExtR(options, collect_error, &log);
    TIFFOpenOptionsSetWarningHandlerExtR(options, ignore_warning, nullptr);
    TIFF* tif = TIFFFdOpenExt(fd, path.c_str(), mode, options);
    TIFFOpenOptionsFree(options);
    if (!tif) {
        ::close(fd);
        throw TiffError(path + ": " + (writing ? "cannot create a TIFF file: " : "not a readable TIFF file: ") +
                        (log.errors.empty() ? "unknown libtiff error" : log.errors));
    }
    return tif;
}

std::string failure(const std::string& path, const std::string& what, const MessageLog& log)
{
    return path + ": " + what + (log.errors.empty() ? "" : " (" + log.errors + ")");
}

std::string page_name(int page) { return "page " + std::to_string(page + 1); }

// The current directory's geometry, or a TiffError saying why the tool cannot read it.
PageInfo describe_page(TIFF* tif, const std::string& path, int page)
{
    uint32_t width = 0, height = 0;
    uint16_t bits = 1, samples = 1, format = SAMPLEFORMAT_UINT, photometric = PHOTOMETRIC_MINISBLACK;
    uint16_t planar = PLANARCONFIG_CONTIG;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height)) {
        throw TiffError(path + ": " + page_name(page) + " has no image size");
    }
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric);
    const std::string where = path + ": " + page_name(page) + ": ";
    if (samples != 1) {
        throw TiffError(where + std::to_string(samples) + " samples per pixel; only greyscale (1 sample) is read");
    }
    if (photometric == PHOTOMETRIC_PALETTE) throw TiffError(where + "palette colour; only greyscale is read");
    if (format != SAMPLEFORMAT_UINT) {
        throw TiffError(where + (format == SAMPLEFORMAT_IEEEFP ? "floating-point" : "signed or complex") +
                        " samples; only unsigned 8/16-bit integers are read");
    }
    if (bits != 8 && bits != 16) {
        throw TiffError(where + std::to_string(bits) + " bits per sample; only 8 and 16 are read");
    }
    if (width == 0 || height == 0 || width > INT_MAX || height > INT_MAX ||
        uint64_t(width) * height > uint64_t(INT_MAX)) {
        throw TiffError(where + "image size " + std::to_string(height) + "x" + std::to_string(width) +
                        " is empty or too large");
    }
    PageInfo info;
    info.height = int(height);
    info.width = int(width);
    info.bits = bits;
    info.index = page;
    info.ifd_offset = TIFFCurrentDirOffset(tif);
    return info;
}

}  // namespace

std::vector<PageInfo> inspect_tiff(const std::string& path)
{
    MessageLog log;
    TIFF* tif = open_tiff(path, "rm", log);
    std::vector<PageInfo> pages;
    try {
        for (;;) {
            pages.push_back(describe_page(tif, path, int(pages.size())));
            if (!TIFFReadDirectory(tif)) break;
        }
    } catch (...) {
        TIFFClose(tif);
        throw;
    }
    TIFFClose(tif);
    // TIFFReadDirectory returns 0 both at the end of the chain and when the next directory is
    // unreadable (a truncated stack): only the collected errors tell them apart.
    if (!log.errors.empty()) {
        throw TiffError(failure(path, "corrupt or truncated after " + page_name(int(pages.size()) - 1), log));
    }
    return pages;
}

struct TiffReader::Handle {
    MessageLog log;
    TIFF* tif = nullptr;
    std::vector<unsigned char> tile;
};

TiffReader::TiffReader(const std::string& path) : path_(path), handle_(new Handle)
{
    handle_->tif = open_tiff(path, "rm", handle_->log);
}

TiffReader::~TiffReader()
{
    if (handle_ && handle_->tif) TIFFClose(handle_->tif);
}

void TiffReader::read_page(const PageInfo& page, void* pixels)
{
    TIFF* tif = handle_->tif;
    MessageLog& log = handle_->log;
    log.errors.clear();
    if (!TIFFSetSubDirectory(tif, page.ifd_offset)) {
        throw TiffError(failure(path_, "cannot read the page's directory", log));
    }
    const PageInfo found = describe_page(tif, path_, page.index);
    if (found.height != page.height || found.width != page.width || found.bits != page.bits) {
        throw TiffError(path_ + ": the page changed since it was inspected");
    }
    const size_t bytes_per_pixel = size_t(page.bits / 8);
    const size_t row_bytes = size_t(page.width) * bytes_per_pixel;
    auto* out = static_cast<unsigned char*>(pixels);
    if (!TIFFIsTiled(tif)) {
        uint32_t rows_per_strip = 0;
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
        rows_per_strip = std::min<uint32_t>(std::max<uint32_t>(rows_per_strip, 1), uint32_t(page.height));
        const uint32_t strips = TIFFNumberOfStrips(tif);
        for (uint32_t row = 0, strip = 0; row < uint32_t(page.height); row += rows_per_strip, ++strip) {
            const uint32_t rows = std::min<uint32_t>(rows_per_strip, uint32_t(page.height) - row);
            const tmsize_t want = tmsize_t(rows * row_bytes);
            if (strip >= strips ||
                TIFFReadEncodedStrip(tif, strip, out + row * row_bytes, want) != want) {
                throw TiffError(failure(path_, "cannot decode strip " + std::to_string(strip) +
                                                   " (truncated or corrupt data)", log));
            }
        }
        return;
    }
    uint32_t tile_w = 0, tile_h = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tile_w);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_h);
    const tmsize_t tile_bytes = TIFFTileSize(tif);
    if (tile_w == 0 || tile_h == 0 || tile_bytes <= 0) {
        throw TiffError(failure(path_, "invalid tile size", log));
    }
    handle_->tile.resize(size_t(tile_bytes));
    for (uint32_t ty = 0; ty < uint32_t(page.height); ty += tile_h) {
        for (uint32_t tx = 0; tx < uint32_t(page.width); tx += tile_w) {
            const uint32_t index = TIFFComputeTile(tif, tx, ty, 0, 0);
            if (TIFFReadEncodedTile(tif, index, handle_->tile.data(), tile_bytes) != tile_bytes) {
                throw TiffError(failure(path_, "cannot decode tile " + std::to_string(index) +
                                                   " (truncated or corrupt data)", log));
            }
            const uint32_t rows = std::min(tile_h, uint32_t(page.height) - ty);
            const size_t copy = std::min(tile_w, uint32_t(page.width) - tx) * bytes_per_pixel;
            for (uint32_t r = 0; r < rows; ++r) {
                std::memcpy(out + (ty + r) * row_bytes + tx * bytes_per_pixel,
                            handle_->tile.data() + r * tile_w * bytes_per_pixel, copy);
            }
        }
    }
}

struct TiffWriter::Handle {
    MessageLog log;
    TIFF* tif = nullptr;
};

TiffWriter::TiffWriter(const std::string& path, bool bigtiff) : path_(path), handle_(new Handle)
{
    handle_->tif = open_tiff(path, bigtiff ? "w8" : "w", handle_->log);
}

TiffWriter::~TiffWriter()
{
    if (handle_ && handle_->tif) TIFFClose(handle_->tif);
}

void TiffWriter::write_uint16(const uint16_t* pixels, int height, int width, TiffCompression compression)
{
    write_page(pixels, height, width, 16, SAMPLEFORMAT_UINT, compression);
}

void TiffWriter::write_uint8(const uint8_t* pixels, int height, int width, TiffCompression compression)
{
    write_page(pixels, height, width, 8, SAMPLEFORMAT_UINT, compression);
}

void TiffWriter::write_float32(const float* pixels, int height, int width, TiffCompression compression)
{
    write_page(pixels, height, width, 32, SAMPLEFORMAT_IEEEFP, compression);
}

void TiffWriter::write_page(const void* pixels, int height, int width, int bits, int sample_format,
                            TiffCompression compression)
{
    TIFF* tif = handle_->tif;
    if (!tif) throw TiffError(path_ + ": written after close");
    const size_t row_bytes = size_t(width) * size_t(bits / 8);
    // Strips of about 64 KiB: small enough to stream, few enough to keep the directory short.
    const uint32_t rows_per_strip = uint32_t(std::clamp<size_t>(65536 / std::max<size_t>(row_bytes, 1), 1, size_t(height)));
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, uint32_t(width));
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, uint32_t(height));
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, uint16_t(bits));
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, uint16_t(1));
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, uint16_t(sample_format));
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, uint16_t(PHOTOMETRIC_MINISBLACK));
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, uint16_t(PLANARCONFIG_CONTIG));
    TIFFSetField(tif, TIFFTAG_COMPRESSION,
                 uint16_t(compression == TiffCompression::deflate ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE));
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
    const auto* in = static_cast<const unsigned char*>(pixels);
    std::vector<unsigned char> strip_copy;
    for (uint32_t row = 0, strip = 0; row < uint32_t(height); row += rows_per_strip, ++strip) {
        const uint32_t rows = std::min<uint32_t>(rows_per_strip, uint32_t(height) - row);
        // libtiff's encoders may change the buffer they are given: they get a copy.
        strip_copy.assign(in + row * row_bytes, in + (row + rows) * row_bytes);
        if (TIFFWriteEncodedStrip(tif, strip, strip_copy.data(), tmsize_t(strip_copy.size())) < 0) {
            throw TiffError(failure(path_, "cannot write", handle_->log));
        }
    }
    if (!TIFFWriteDirectory(tif)) throw TiffError(failure(path_, "cannot write the page's directory", handle_->log));
}

void TiffWriter::close()
{
    TIFF* tif = handle_->tif;
    if (!tif) return;
    handle_->tif = nullptr;
    const int flushed = TIFFFlush(tif);
    TIFFClose(tif);
    if (!flushed || !handle_->log.errors.empty()) throw TiffError(failure(path_, "cannot finish the file", handle_->log));
}

}  // namespace registration
