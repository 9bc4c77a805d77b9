"""Which passages of the topic's page each fact is judged against."""
