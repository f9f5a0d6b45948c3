//! Triplet approximation of redundancy-2 under PS (placeholder, filled below).
