//! Encoding JSON text: the output buffer, string escaping, number
//! formatting. (Being written: issue "eager loads, dumps, validate".)
