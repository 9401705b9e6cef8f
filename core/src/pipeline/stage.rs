//! The 14 stages of DESIGN §4, numbered as in its table. Audit records name
//! the stage an invocation reached by this number.

use serde::{Serialize, Serializer};

/// One pipeline stage. `number()` is the DESIGN §4 table row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Stage {
    Resolve = 1,
    Exposure = 2,
    FreezeFrame = 3,
    ValidateInput = 4,
    RuntimePolicies = 5,
    CapabilityPolicies = 6,
    GrantCheck = 7,
    ApprovalGate = 8,
    Deadline = 9,
    AuditStarted = 10,
    Handler = 11,
    ValidateOutput = 12,
    RedactOutput = 13,
    Finished = 14,
}

impl Stage {
    pub const ALL: [Stage; 14] = [
        Stage::Resolve,
        Stage::Exposure,
        Stage::FreezeFrame,
        Stage::ValidateInput,
        Stage::RuntimePolicies,
        Stage::CapabilityPolicies,
        Stage::GrantCheck,
        Stage::ApprovalGate,
        Stage::Deadline,
        Stage::AuditStarted,
        Stage::Handler,
        Stage::ValidateOutput,
        Stage::RedactOutput,
        Stage::Finished,
    ];

    /// The DESIGN §4 row number, 1–14.
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// A stable name for logs and bindings' drift tests.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Resolve => "resolve",
            Stage::Exposure => "exposure",
            Stage::FreezeFrame => "freezeFrame",
            Stage::ValidateInput => "validateInput",
            Stage::RuntimePolicies => "runtimePolicies",
            Stage::CapabilityPolicies => "capabilityPolicies",
            Stage::GrantCheck => "grantCheck",
            Stage::ApprovalGate => "approvalGate",
            Stage::Deadline => "deadline",
            Stage::AuditStarted => "auditStarted",
            Stage::Handler => "handler",
            Stage::ValidateOutput => "validateOutput",
            Stage::RedactOutput => "redactOutput",
            Stage::Finished => "finished",
        }
    }

    pub fn from_number(n: u8) -> Option<Stage> {
        Stage::ALL.get(usize::from(n).checked_sub(1)?).copied()
    }
}

impl Serialize for Stage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.number())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_design_table() {
        for (i, s) in Stage::ALL.iter().enumerate() {
            assert_eq!(usize::from(s.number()), i + 1);
            assert_eq!(Stage::from_number(s.number()), Some(*s));
        }
        assert_eq!(Stage::from_number(0), None);
        assert_eq!(Stage::from_number(15), None);
    }
}
