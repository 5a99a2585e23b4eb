use agentcore_stages::{Executable, Gated, Previewed, Stage};

// A user type cannot claim to be a stage that produces `Call<Gated>`, nor
// a state `Execute` accepts: both traits are sealed.
struct MyGate;

impl Stage<Previewed> for MyGate {
    type Out = Gated;
}

struct MyState;

impl Executable for MyState {}

fn main() {}
