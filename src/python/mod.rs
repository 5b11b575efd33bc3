//! PyO3 glue (helper B).
