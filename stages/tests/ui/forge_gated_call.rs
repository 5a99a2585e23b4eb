use agentcore_stages::{Call, Gated, GatedArgs};
use serde_json::json;

fn main() {
    // Neither the state nor the arguments can be built outside the crate.
    let _args = GatedArgs { value: json!({}) };
    let _args = GatedArgs::new(json!({}));
    let call = Call::new("c1", "t", json!({}));
    let _gated: Call<Gated> = call.advance(Gated {});
}
