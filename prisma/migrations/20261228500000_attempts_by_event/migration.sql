-- CreateIndex
-- An endpoint's attempts of one event (the console's event page asks the deliveries list with
-- `event=`): without it that list walks every attempt the endpoint ever had.
CREATE INDEX "webhook_attempts_endpoint_id_event_id_seq_idx" ON "webhook_attempts"("endpoint_id", "event_id", "seq");
