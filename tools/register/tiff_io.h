// TIFF input and output of flcc-register, on libtiff.
//
// Input: greyscale pages of one sample, 8 or 16 bits per sample, unsigned integer, stripped or
// tiled, any compression libtiff decodes; classic TIFF and BigTIFF; one frame per page. Anything
// else (colour, palette, float, signed or 1-bit images) is refused with a message saying what the
// page is. Every libtiff error is captured per file handle (never printed by libtiff) and becomes
// the message of a TiffError, which names the file.
//
// Output: 8/16-bit greyscale pages (the synthetic data generator) and float32 pages (correlation
// maps), one page per call, optionally deflate-compressed.
#pragma once

#include "input_error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace registration {

// A failure about one input or output file; what() starts with the file's path.
class TiffError : public InputError {
public:
    using InputError::InputError;
};

// The geometry of one page, and where its directory lies in the file (for direct access).
struct PageInfo {
    int height = 0;
    int width = 0;
    int bits = 0;             // 8 or 16
    int index = 0;            // 0-based page number in its file
    uint64_t ifd_offset = 0;  // the page's directory offset (TIFFSetSubDirectory)
};

// Reads every page's directory of `path` (not the pixel data). Throws TiffError when the file is
// missing, unreadable, not a TIFF, has a broken directory chain, or holds a page of a kind the
// tool does not read.
std::vector<PageInfo> inspect_tiff(const std::string& path);

// A TIFF file held open for reading pages, by one thread at a time.
class TiffReader {
public:
    explicit TiffReader(const std::string& path);   // throws TiffError
    ~TiffReader();
    TiffReader(const TiffReader&) = delete;
    TiffReader& operator=(const TiffReader&) = delete;

    const std::string& path() const { return path_; }

    // Decodes the page whose directory is at page.ifd_offset into `pixels` (height * width
    // elements of bits / 8 bytes, rows back to back). Throws TiffError when the page differs from
    // `page`'s geometry or its data cannot be decoded (truncated file, corrupt compressed data).
    void read_page(const PageInfo& page, void* pixels);

private:
    struct Handle;
    std::string path_;
    std::unique_ptr<Handle> handle_;
};

enum class TiffCompression { none, deflate };

// Writes pages to a new TIFF file, one page per call (a multi-page stack when called again).
class TiffWriter {
public:
    // bigtiff: write BigTIFF (64-bit offsets), needed past 4 GiB.
    TiffWriter(const std::string& path, bool bigtiff = false);   // throws TiffError
    ~TiffWriter();
    TiffWriter(const TiffWriter&) = delete;
    TiffWriter& operator=(const TiffWriter&) = delete;

    void write_uint16(const uint16_t* pixels, int height, int width,
                      TiffCompression compression = TiffCompression::none);
    void write_uint8(const uint8_t* pixels, int height, int width,
                     TiffCompression compression = TiffCompression::none);
    void write_float32(const float* pixels, int height, int width,
                       TiffCompression compression = TiffCompression::none);
    // Finishes the file; throws TiffError when the last writes fail. The destructor closes a file
    // not closed yet, without reporting.
    void close();

private:
    void write_page(const void* pixels, int height, int width, int bits, int sample_format,
                    TiffCompression compression);
    struct Handle;
    std::string path_;
    std::unique_ptr<Handle> handle_;
};

}  // namespace registration
