// Synthetic registration data with known sub-pixel offsets: EBSD-like (one reference pattern and
// frames of it displaced) and PIV-like (pairs of particle images), as 8/16-bit TIFF, with the true
// offsets of every subregion of a grid.
//
// Construction, per subregion of the grid (the subregions must not overlap):
// - a periodic pattern Q of L x L pixels, L >= roi_size + 2 * (max displacement + 4), is drawn:
//   EBSD-like, a band-limited Gaussian random field (white noise times a Gaussian spectrum of
//   correlation length `feature_size`), plus a smooth background; PIV-like, Gaussian particles
//   (sigma `feature_size` / 2) at random positions on a dim background;
// - a frame's subregion is the centre of Q moved by the subregion's displacement u, by the
//   Fourier shift theorem (Q's spectrum times exp(-2 pi i k.u / L)), which is exact for a
//   band-limited periodic pattern: the content of the subregion and of its surroundings up to
//   the pad is the reference content translated by exactly u;
// - Poisson noise (mean `photons` at the mean intensity) is drawn independently for every frame,
//   the reference included (EBSD-like frames: from a generator seeded by the seed and the frame's
//   index, so that the set does not depend on how many threads draw it).
// Pixels outside every subregion hold the background level. The displacement field is smooth in
// space and from frame to frame: EBSD-like, a translation plus a linear strain-like term whose
// coefficients drift along the scan; PIV-like, a uniform flow plus a vortex that changes from pair
// to pair. Each subregion is moved by the field's value at its centre, which is the truth.
//
// Files in `folder`:
//   reference.tif              EBSD-like: the reference frame
//   frames/frame_NNNNN.tif     the frames (or frames.tif, one page per frame, with `stack`)
//   frames.txt                 the frame files in order, for @frames.txt
//   truth.csv                  frame,roi,y,x,dy,dx: the true offsets in flcc-register's numbering
//                              (EBSD-like: each frame against the reference; PIV-like: frame
//                              2k+1 against frame 2k)
//   truth_sequence.csv         EBSD-like: each frame against the previous one (sequence mode)
#pragma once

#include <string>

namespace registration {

enum class SyntheticKind { ebsd, piv };

struct SyntheticSpec {
    SyntheticKind kind = SyntheticKind::ebsd;
    std::string folder;
    int frames = 20;            // PIV-like: an even number (pairs)
    int height = 256, width = 256;
    int bits = 16;              // 8 or 16
    int roi_size = 64, roi_step = 64, roi_margin = 32;
    double max_displacement = 3.0;   // largest displacement component, pixels
    double feature_size = 4.0;  // EBSD-like: correlation length; PIV-like: particle diameter (pixels)
    double photons = 2000;      // mean photon count (Poisson noise); 0: no noise
    unsigned seed = 1;
    bool stack = false;         // all frames in one multi-page TIFF
    int threads = 0;            // EBSD-like frames drawn at once (0: the hardware's threads)
};

// Writes the set; throws InputError (bad spec, unwritable folder) or TiffError.
void write_synthetic_set(const SyntheticSpec& spec);

}  // namespace registration
