//! SVG plots drawn from finished reports (never solving).
