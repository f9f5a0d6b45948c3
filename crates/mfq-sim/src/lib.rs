//! Finite-N simulation (under construction).
