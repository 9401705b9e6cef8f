//! The governed invocation pipeline: a sans-I/O state machine. (Being built: issue 4.)
