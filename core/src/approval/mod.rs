//! Approval requests and stores. (Being built: issue 4.)
